//! Handles and the slot table: which slots hold a live object, each slot's generation, and
//! the free list of slots to reuse.
//!
//! - A [`Handle`] is a slot index and the generation of the object in it. Removing an
//!   object bumps its slot's generation, so every handle to it goes stale at once, and the
//!   next object in that slot gets a handle no earlier one equals.
//! - Slot reuse is last in, first out: an insert takes the most recently freed slot, and a
//!   new slot (the next index) only when none is free. In a new world inserts take slots
//!   0, 1, 2, ... in order. The order depends only on the sequence of calls.
//! - A slot whose generation reaches `u32::MAX` on removal is retired, never reused, so a
//!   generation never wraps and no stale handle can come back to life.
//! - Cost: O(1) a call. Threads: none. Allocation: the three per-slot vectors grow by one
//!   on each new slot (amortised); nothing else.
//! - Source: the generational index (slot map) of Box2D v3's id pool and of `slotmap`.

use crate::Error;

/// The name of one object in a [`World`](crate::World): its slot and the slot's
/// generation when the object was inserted. Ordered by `(index, generation)`.
///
/// A handle stays valid until its object is removed; after that every call taking it
/// returns [`Error::StaleHandle`], even once a new object fills the same slot (the new one
/// has a higher generation).
// INVARIANT: the field order is the derived `Ord`: index first, then generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Handle {
    index: u32,
    generation: u32,
}

impl Default for Handle {
    /// [`Handle::NULL`].
    fn default() -> Self {
        Self::NULL
    }
}

impl Handle {
    /// A handle that never names an object (its index is past every slot): a placeholder
    /// for a field not set yet. Every call taking it returns [`Error::StaleHandle`].
    pub const NULL: Handle = Handle { index: u32::MAX, generation: u32::MAX };

    /// Whether this is [`Handle::NULL`].
    pub const fn is_null(self) -> bool {
        self.index == u32::MAX && self.generation == u32::MAX
    }

    /// The handle [`Handle::raw`] gave this value (`(generation << 32) | index`): for
    /// storing a handle in a `u64` (user data, an engine's own id) and back. Any value
    /// makes a handle; one that names no live object is stale wherever it is used.
    pub const fn from_raw(raw: u64) -> Handle {
        Handle { index: raw as u32, generation: (raw >> 32) as u32 }
    }

    /// The handle of the object in `index` at `generation`.
    pub(crate) const fn new(index: u32, generation: u32) -> Self {
        Self { index, generation }
    }

    /// The object's slot: small, dense, reused after removal (an index into per-object
    /// arrays of the caller's own).
    pub fn index(self) -> u32 {
        self.index
    }

    /// The slot's generation when the object was inserted.
    pub fn generation(self) -> u32 {
        self.generation
    }

    /// `(generation << 32) | index`: the value [`Error::StaleHandle`] reports, and what
    /// [`Handle::from_raw`] takes back.
    pub const fn raw(self) -> u64 {
        ((self.generation as u64) << 32) | self.index as u64
    }
}

/// The most slots a world may hold: `u32::MAX - 1`, so that a slot count and every index
/// fit a `u32` with `u32::MAX` to spare.
pub(crate) const MAX_SLOTS: u32 = u32::MAX - 1;

/// The generation of a retired slot (dead and never reused).
pub(crate) const RETIRED: u32 = u32::MAX;

/// Which slots are live, their generations, and the slots free for reuse.
#[derive(Clone, Debug)]
pub(crate) struct Slots {
    /// Per slot: the generation of its live object; for a dead slot, the generation its next
    /// object gets, or [`RETIRED`].
    pub(crate) generations: Vec<u32>,
    /// Per slot: whether it holds a live object.
    pub(crate) alive: Vec<bool>,
    /// The dead slots to reuse, most recently freed last (taken from the end).
    /// INVARIANT: exactly the dead slots that are not retired, each once.
    pub(crate) free: Vec<u32>,
    /// Live slots (`alive` set).
    pub(crate) live: usize,
    /// The most slots this table may hold: [`MAX_SLOTS`] (lower in unit tests).
    pub(crate) limit: u32,
}

impl Slots {
    /// An empty table.
    pub(crate) fn new() -> Self {
        Self { generations: Vec::new(), alive: Vec::new(), free: Vec::new(), live: 0, limit: MAX_SLOTS }
    }

    /// Slots, live or dead.
    pub(crate) fn len(&self) -> usize {
        self.generations.len()
    }

    /// The slot `h` names, if it holds `h`'s object; else [`Error::StaleHandle`].
    pub(crate) fn slot(&self, h: Handle) -> Result<usize, Error> {
        let s = h.index as usize;
        match (self.alive.get(s), self.generations.get(s)) {
            (Some(true), Some(&g)) if g == h.generation => Ok(s),
            _ => Err(Error::StaleHandle { handle: h.raw() }),
        }
    }

    /// `Ok` when `n` more objects fit: free slots first, then new ones up to the limit.
    /// Else [`Error::TooManyBoxes`] with the number of objects the world would hold.
    pub(crate) fn room(&self, n: usize) -> Result<(), Error> {
        let fresh = (self.limit as usize).saturating_sub(self.len());
        if n <= self.free.len().saturating_add(fresh) {
            Ok(())
        } else {
            Err(Error::TooManyBoxes { len: self.live.saturating_add(n) })
        }
    }

    /// A dead slot for a new object: the last freed one, else a new dead slot at the end
    /// (generation 0). [`Slots::room`] must have said yes.
    pub(crate) fn claim(&mut self) -> u32 {
        if let Some(s) = self.free.pop() {
            return s;
        }
        let s = self.len() as u32;
        self.generations.push(0);
        self.alive.push(false);
        s
    }

    /// Puts an object into the dead slot `s` (claimed), at the slot's generation.
    pub(crate) fn revive(&mut self, s: u32) -> Handle {
        self.alive[s as usize] = true;
        self.live += 1;
        Handle::new(s, self.generations[s as usize])
    }

    /// Removes the object in the live slot `s`: the generation moves on, and the slot goes
    /// on the free list unless the generation reached [`RETIRED`].
    pub(crate) fn kill(&mut self, s: usize) {
        self.alive[s] = false;
        self.live -= 1;
        self.generations[s] += 1;
        if self.generations[s] != RETIRED {
            self.free.push(s as u32);
        }
    }

    /// Heap bytes held, from capacities.
    pub(crate) fn bytes(&self) -> usize {
        self.generations.capacity() * 4 + self.alive.capacity() + self.free.capacity() * 4
    }
}
