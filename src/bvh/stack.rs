//! The fixed stack of pending subtrees a walk keeps: left uninitialised, since a query
//! that zeroed its stack (up to 1.5 KB for a four-wide cast) spent as long on that as on
//! a cheap walk (a point that meets nothing). PERF: benches/queries.rs (`points` on
//! `terrain`).
//!
//! - Input: pushes and pops. Output: the pushed items, last in first out.
//! - Cost: O(1) a step; no allocation, no work at creation. A push past the capacity
//!   panics, as a full array's would; the trees' depth bound
//!   keeps every walk below it.
//! - Source: this crate.

use std::mem::MaybeUninit;

/// A stack of at most `N` copies of `T` in a caller's buffer (module docs). The buffer
/// is a local of its own: a stack value holding it, made with its length of 0, was
/// zeroed whole by the compiler.
pub(super) struct Stack<'a, T: Copy, const N: usize> {
    /// Items `..len` are written; the rest are not.
    items: &'a mut MaybeUninit<[T; N]>,
    len: usize,
}

/// A stack's buffer, uninitialised.
pub(super) fn buffer<T: Copy, const N: usize>() -> MaybeUninit<[T; N]> {
    MaybeUninit::uninit()
}

impl<'a, T: Copy, const N: usize> Stack<'a, T, N> {
    /// An empty stack in `items` (whatever it holds).
    #[inline(always)]
    pub(super) fn new(items: &'a mut MaybeUninit<[T; N]>) -> Self {
        Self { items, len: 0 }
    }

    /// Pushes `x`; panics where the stack holds `N` already.
    #[inline(always)]
    pub(super) fn push(&mut self, x: T) {
        assert!(self.len < N, "a walk's stack overflowed");
        // SAFETY: `len < N`, so the write stays within the array.
        unsafe { self.items.as_mut_ptr().cast::<T>().add(self.len).write(x) };
        self.len += 1;
    }

    /// The last item pushed and not yet popped, taken off.
    #[inline(always)]
    pub(super) fn pop(&mut self) -> Option<T> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        // SAFETY: `len < N`, and every item below the old `len` was written by `push`.
        Some(unsafe { self.items.as_ptr().cast::<T>().add(self.len).read() })
    }
}

#[cfg(test)]
mod tests {
    use super::{buffer, Stack};

    /// Last in, first out, empty at the end; a push past the capacity panics.
    #[test]
    fn pops_what_was_pushed_last() {
        let mut b = buffer::<(u32, f32), 4>();
        let mut s = Stack::new(&mut b);
        assert_eq!(s.pop(), None);
        for i in 0..4 {
            s.push((i, i as f32));
        }
        assert_eq!(s.pop(), Some((3, 3.0)));
        s.push((9, 9.0));
        let all: Vec<_> = std::iter::from_fn(|| s.pop()).collect();
        assert_eq!(all, [(9, 9.0), (2, 2.0), (1, 1.0), (0, 0.0)]);
        let full = std::panic::catch_unwind(|| {
            let mut b = buffer::<u32, 2>();
            let mut s = Stack::new(&mut b);
            (0..3).for_each(|i| s.push(i));
        });
        assert!(full.is_err());
    }
}
