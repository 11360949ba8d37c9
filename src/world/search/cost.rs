//! The choice, each frame, between the walks of the changed objects and finding the frame
//! whole ([`Search::whole`](super::Search)): a frame never costs much more than the
//! one-shot finder over every live box, however many objects change and how far.
//!
//! - Input: the changed and live object counts; after each frame, the time from the end
//!   of the trees' upkeep to the end of the events' difference (what the two ways do
//!   differently). Output: whole or not.
//! - Rule: over half the live objects changed (a first update, a level loaded), whole.
//!   Otherwise each way's cost is predicted from its last frames, a walk frame per
//!   changed object and a whole frame per live object (each an average that halves the
//!   weight of the frames before at each frame), and the cheaper way is taken. While the
//!   whole way wins, the walks are tried again (motion calms down; the walks' lists fill
//!   again) after twice as many frames as the last try cost whole frames (up to
//!   [`PROBE_MAX`]), so the tries add at most half a whole frame to a frame on average.
//! - Output bytes: both ways give the same events and pairs, so the choice, which reads a
//!   clock, changes only the time a frame takes.
//! - Where no clock exists (`crate::time`), no frame is recorded and the choice is by
//!   counts alone: whole over half the live objects changed, the walks otherwise.
//! - Cost: O(1). Threads: none. Allocation: none.
//! - Source: this crate.

use crate::time::{Clock, Instant};

/// The most frames found whole between two tries of the walks.
const PROBE_MAX: u32 = 256;

/// Over this share of the live objects changed, a frame is found whole at once.
const WHOLE_SHARE: usize = 2;

/// Whether a frame with `changed` of `live` objects changed is found whole whatever the
/// frames before cost: a walk a changed object then costs more than the one-shot finder
/// over every box. PERF: benches/world.rs (`build`: the first update).
pub(crate) fn is_whole(changed: usize, live: usize) -> bool {
    changed > live / WHOLE_SHARE
}

/// The costs seen so far and the frame in flight (module docs), timed by clock `C`.
#[derive(Clone, Debug)]
pub(super) struct Cost<C = Instant> {
    /// Seconds a whole frame took a live object, and a walk frame a changed object.
    whole: Option<f64>,
    walk: Option<f64>,
    /// Frames to find whole before the walks are tried again.
    wait: u32,
    /// How the frame in flight is found, and when its timed part began.
    chose_whole: bool,
    started: Option<C>,
}

impl<C> Default for Cost<C> {
    fn default() -> Self {
        Self { whole: None, walk: None, wait: 0, chose_whole: false, started: None }
    }
}

impl<C: Clock> Cost<C> {
    /// Whether the frame with `changed` of `live` objects changed is found whole; starts
    /// its clock.
    pub(super) fn choose(&mut self, changed: usize, live: usize) -> bool {
        let whole = is_whole(changed, live)
            || match (self.whole, self.walk) {
                (Some(w), Some(k)) if k * changed as f64 > w * live as f64 => {
                    if self.wait == 0 {
                        false
                    } else {
                        self.wait -= 1;
                        true
                    }
                }
                _ => false,
            };
        self.chose_whole = whole;
        self.started = Some(C::now());
        whole
    }

    /// The frame chosen by the last [`Cost::choose`] has succeeded: its time goes into
    /// the averages. A frame that failed is not recorded (its retry chooses again), nor
    /// is a frame where no clock exists.
    pub(super) fn record(&mut self, changed: usize, live: usize) {
        if let Some(secs) = self.started.take().and_then(|t| t.seconds()) {
            self.record_secs(secs, changed, live);
        }
    }

    /// [`Cost::record`] for a frame that took `secs`.
    fn record_secs(&mut self, secs: f64, changed: usize, live: usize) {
        let avg = |old: Option<f64>, x: f64| Some(old.map_or(x, |o| 0.5 * (o + x)));
        if self.chose_whole {
            self.whole = avg(self.whole, secs / live.max(1) as f64);
            return;
        }
        let per = secs / changed.max(1) as f64;
        self.walk = avg(self.walk, per);
        // A try that lost waits twice as many frames as it cost whole frames, so that
        // the tries add at most half a whole frame to each frame on average.
        if let Some(w) = self.whole {
            let ratio = secs / (w * live.max(1) as f64);
            if ratio > 1.0 {
                self.wait = (2.0 * ratio).ceil().min(PROBE_MAX as f64) as u32;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cost;
    use crate::time::clockless;

    /// Feeds the model a frame of `changed` of `live` objects that took `secs`, as chosen.
    fn frame(
        c: &mut Cost<std::time::Instant>,
        changed: usize,
        live: usize,
        walk_secs: f64,
        whole_secs: f64,
    ) -> bool {
        let whole = c.choose(changed, live);
        c.record_secs(if whole { whole_secs } else { walk_secs }, changed, live);
        whole
    }

    #[test]
    fn the_cheaper_way_wins_and_the_walks_are_tried_again() {
        let mut c = Cost::default();
        // The first update: whole, by share.
        assert!(frame(&mut c, 1000, 1000, 0.0, 1.0));
        // Walks cheap: they stay.
        for _ in 0..5 {
            assert!(!frame(&mut c, 10, 1000, 0.01, 1.0));
        }
        // Walks turn four times as costly as a whole frame: whole from the next frame
        // on, with a try of the walks every ninth frame (eight whole ones between).
        assert!(!frame(&mut c, 100, 1000, 4.0, 1.0));
        let picks: Vec<bool> = (0..45).map(|_| frame(&mut c, 100, 1000, 4.0, 1.0)).collect();
        let tries: Vec<usize> = (0..45).filter(|&i| !picks[i]).collect();
        assert_eq!(tries, [8, 17, 26, 35, 44], "{picks:?}");
        // Far costlier tries wait longer.
        c.wait = 0;
        assert!(!frame(&mut c, 100, 1000, 100.0, 1.0));
        assert_eq!(c.wait, 200);
        c.wait = 0;
        // Calm again: a try that wins keeps the walks.
        let mut calm = 0;
        for _ in 0..70 {
            if !frame(&mut c, 100, 1000, 0.01, 1.0) {
                calm += 1;
            }
        }
        assert!(calm > 60, "{calm}");
    }

    /// Without a clock, the choice is by counts alone: whole over half the live objects
    /// changed, the walks otherwise, whatever the frames before were.
    #[test]
    fn without_a_clock_the_counts_choose() {
        let mut c = Cost::<clockless::Instant>::default();
        for (changed, live, whole) in
            [(1000, 1000, true), (10, 1000, false), (500, 1000, false), (501, 1000, true), (0, 0, false)]
        {
            for _ in 0..3 {
                assert_eq!(c.choose(changed, live), whole, "{changed} of {live}");
                c.record(changed, live);
                assert_eq!((c.whole, c.walk, c.wait), (None, None, 0), "nothing recorded");
            }
        }
        assert_eq!(clockless::Instant::now().elapsed(), std::time::Duration::ZERO);
    }
}
