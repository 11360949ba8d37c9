//! The clock the statistics and the world's cost model read, where the platform has one.
//! `std::time::Instant::now` panics on `wasm32-unknown-unknown`; there, [`Instant`] is
//! `clockless::Instant`, whose every reading is zero.
//!
//! - Output: [`Instant`], with `now()` and `elapsed()` as std's; [`Clock`], which says
//!   whether a reading is a real time (the cost model ignores readings that are not).
//! - Where no clock exists, every time in `Stats` and `WorldStats` is zero, and the world
//!   chooses its way each frame by counts alone (`world::search::cost`); no output
//!   changes, since no output depends on a time.
//! - Cost: one clock read a stamp, or nothing. Threads: any. Allocation: none.
//! - Source: this crate.

pub(crate) use std::time::Duration;

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub(crate) use std::time::Instant;

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub(crate) use clockless::Instant;

/// A stamp taken at a moment, that tells the seconds since, where it can.
pub(crate) trait Clock: Copy {
    /// A stamp of now.
    fn now() -> Self;
    /// Seconds since the stamp was taken, or `None` where no clock exists.
    fn seconds(&self) -> Option<f64>;
}

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
impl Clock for std::time::Instant {
    fn now() -> Self {
        std::time::Instant::now()
    }
    fn seconds(&self) -> Option<f64> {
        Some(self.elapsed().as_secs_f64())
    }
}

/// The stand-in where no clock exists; built natively in tests, so that the code that
/// reads it is tested where it cannot run for real.
#[cfg(any(test, all(target_arch = "wasm32", target_os = "unknown")))]
pub(crate) mod clockless {
    use super::{Clock, Duration};

    /// A stamp that knows no time: everything takes zero.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Instant;

    impl Instant {
        /// A stamp.
        pub(crate) fn now() -> Self {
            Instant
        }
        /// Zero.
        pub(crate) fn elapsed(&self) -> Duration {
            Duration::ZERO
        }
    }

    impl Clock for Instant {
        fn now() -> Self {
            Instant
        }
        fn seconds(&self) -> Option<f64> {
            None
        }
    }
}
