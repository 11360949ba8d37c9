//! The crate's insides that its own benches, tests and examples reach for: seeded scene
//! generators ([`scene`]) and the kernels measured on their own ([`morton`],
//! [`radix_sort`]). Built for the crate's unit tests and behind the non-default
//! `internals` feature, hidden from the docs: no stability promise.

pub mod scene;

pub use crate::kernels::{morton, radix_sort};
