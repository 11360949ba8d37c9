//! Every integration test but `explosion` (which installs its own allocator), as modules
//! of one test binary: the crate's generic code is compiled and linked once, not once a
//! file, which keeps a clean `.ci/run` on a 2-core machine well inside its time.

mod common;
#[allow(dead_code)]
#[path = "world/model.rs"]
mod model;

mod cliffs;
mod determinism;
mod errors;
mod golden;
mod grid;
mod interop;
mod methods;
mod oracle;
mod quadtree;
mod queries;
mod rdc;
#[cfg(feature = "serde")]
mod snapshot;
mod subnormal;
mod world;
mod world_api;
mod world_failures;
mod world_motion;
