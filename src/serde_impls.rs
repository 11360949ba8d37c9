//! Serde for the value types whose derive cannot be written: [`Aabb<D>`], whose corners
//! are `[f32; D]` for a generic `D` (serde implements arrays of each fixed length, not of
//! a const parameter). The other value types (`Handle`, `Kind`, `Filter`, `Config`,
//! `Method`, `Refine`, `Departed`) derive theirs beside their definitions; the world's
//! snapshot is `world::snapshot`.
//!
//! - Format: a box is a struct `{ min, max }`, each corner a tuple of `D` floats, so JSON
//!   reads `{"min":[0.0,1.0],"max":[2.0,3.0]}` and binary formats store no lengths.
//! - Input checked: a corner of another length than `D` is an error (`invalid length`);
//!   the values are not (a box may be invalid as a value: NaN, `min > max`; the calls
//!   that take boxes check them, and so does a world's snapshot).
//! - Cost: O(D) a box. Threads: none. Allocation: none.
//! - Source: serde's own array impls, for a const length. Tested in
//!   `tests/suite/snapshot.rs`.

use crate::Aabb;
use serde::de::{Error as _, IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// One corner of a box: a tuple of exactly `D` floats.
struct Corner<const D: usize>([f32; D]);

impl<const D: usize> Serialize for Corner<D> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut t = serializer.serialize_tuple(D)?;
        for x in &self.0 {
            t.serialize_element(x)?;
        }
        t.end()
    }
}

impl<'de, const D: usize> Deserialize<'de> for Corner<D> {
    fn deserialize<De: Deserializer<'de>>(deserializer: De) -> Result<Self, De::Error> {
        /// Reads `D` floats and refuses one more.
        struct Floats<const D: usize>;

        impl<'de, const D: usize> Visitor<'de> for Floats<D> {
            type Value = Corner<D>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a corner of {D} coordinates")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Corner<D>, A::Error> {
                let mut c = [0.0f32; D];
                for (k, x) in c.iter_mut().enumerate() {
                    *x = seq.next_element()?.ok_or_else(|| A::Error::invalid_length(k, &self))?;
                }
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(A::Error::invalid_length(D + 1, &self));
                }
                Ok(Corner(c))
            }
        }

        deserializer.deserialize_tuple(D, Floats::<D>)
    }
}

/// A box as it is written: its two corners.
#[derive(Serialize, Deserialize)]
#[serde(rename = "Aabb", deny_unknown_fields)]
struct Corners<const D: usize> {
    min: Corner<D>,
    max: Corner<D>,
}

impl<const D: usize> Serialize for Aabb<D> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Corners { min: Corner(self.min), max: Corner(self.max) }.serialize(serializer)
    }
}

impl<'de, const D: usize> Deserialize<'de> for Aabb<D> {
    fn deserialize<De: Deserializer<'de>>(deserializer: De) -> Result<Self, De::Error> {
        let c = Corners::<D>::deserialize(deserializer)?;
        Ok(Aabb { min: c.min.0, max: c.max.0 })
    }
}
