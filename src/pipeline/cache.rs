//! The one-shot calls' finders: [`find_pairs`](crate::find_pairs) and
//! [`find_pairs_with`](crate::find_pairs_with) borrow a [`Broadphase`] from a process-wide
//! [`Pool`] and give it back afterwards, so that a stream of one-shot calls reuses its
//! buffers instead of faulting fresh pages in on every call.
//!
//! - Input: the boxes and the call's [`Config`]; output: the pairs, the same bytes as a
//!   fresh [`Broadphase`] gives (a finder's output depends on its input and configuration
//!   alone, never on its buffers' history).
//! - Bound: at most [`PER_TYPE`] finders a dimension are kept, each with buffers about the
//!   size of the largest call it served; [`release_cached_buffers`] drops them all.
//! - Parallel: the pool's lock is held only to take or put a finder, never while pairs are
//!   found; concurrent callers each take a finder of their own (or make one).
//! - Failure: a poisoned lock skips the pool (a fresh finder, dropped afterwards); a call
//!   that panics drops its finder on the way out.
//! - Source: this crate (an object pool keyed by type, `std::any::Any`).

use super::Broadphase;
use crate::{Aabb, Config, Error};
use std::any::Any;
use std::sync::Mutex;

/// Finders kept a type (a dimension): enough for a few threads calling at once.
pub(crate) const PER_TYPE: usize = 4;

/// Boxed values of any type, at most [`PER_TYPE`] of each, the most recently put last.
#[derive(Debug, Default)]
pub(crate) struct Pool {
    slots: Mutex<Vec<Box<dyn Any + Send>>>,
}

/// The pool every one-shot call shares.
static FINDERS: Pool = Pool::new();

impl Pool {
    pub(crate) const fn new() -> Self {
        Self { slots: Mutex::new(Vec::new()) }
    }

    /// The most recently put `T`, if any (none where the lock is poisoned).
    pub(crate) fn take<T: Any + Send>(&self) -> Option<Box<T>> {
        let mut slots = self.slots.lock().ok()?;
        let at = slots.iter().rposition(|s| s.is::<T>())?;
        slots.remove(at).downcast().ok()
    }

    /// Keeps `value` unless [`PER_TYPE`] values of its type are kept already (or the lock
    /// is poisoned); a value not kept is dropped after the lock is let go.
    pub(crate) fn put<T: Any + Send>(&self, value: Box<T>) {
        let Ok(mut slots) = self.slots.lock() else { return };
        if slots.iter().filter(|s| s.is::<T>()).count() < PER_TYPE {
            slots.push(value);
            return;
        }
        drop(slots);
        drop(value);
    }

    /// How many `T` are kept.
    #[cfg(test)]
    pub(crate) fn count<T: Any + Send>(&self) -> usize {
        self.slots.lock().map_or(0, |s| s.iter().filter(|s| s.is::<T>()).count())
    }

    /// Drops every value kept, after the lock is let go. A poisoned lock is cleared too:
    /// the values are whole (a `Vec`'s operations leave it valid on a panic), and no call
    /// takes from this pool again.
    pub(crate) fn clear(&self) {
        let kept = std::mem::take(&mut *self.slots.lock().unwrap_or_else(|e| e.into_inner()));
        drop(kept);
    }
}

/// [`find_pairs_with`](crate::find_pairs_with) on a finder from `pool`: the same checks,
/// errors and pairs as on a fresh [`Broadphase`].
pub(crate) fn find_pairs_in<const D: usize>(
    pool: &Pool,
    boxes: &[Aabb<D>],
    config: &Config<D>,
) -> Result<Vec<[u32; 2]>, Error> {
    config.validate()?;
    let mut finder =
        pool.take::<Broadphase<D>>().unwrap_or_else(|| Box::new(Broadphase::checked(*config, false)));
    // INVARIANT: the configuration is the finder's only state a call reads from the
    // calls before it (the finder set apart for strays takes it at each call:
    // `Broadphase::pairs_apart`); every buffer is rewritten before it is read.
    finder.config = *config;
    let mut out = Vec::new();
    let found = finder.find_pairs(boxes, &mut out);
    // A call refused for its input leaves its finder usable (`Broadphase::find_pairs`;
    // tests: `broadphase_usable_after_error` in tests/suite/errors.rs, and the errors test
    // below), so it goes back. Any other error drops it: out of memory, its buffers are
    // memory the process lacks; a broken invariant, its state is not to be trusted.
    if matches!(
        found,
        Ok(()) | Err(Error::InvalidBox { .. } | Error::TooManyBoxes { .. } | Error::TooManyPairs { .. })
    ) {
        pool.put(finder);
    }
    found.map(|()| out)
}

/// [`find_pairs_with`](crate::find_pairs_with) on the process-wide pool.
pub(crate) fn find_pairs_cached<const D: usize>(
    boxes: &[Aabb<D>],
    config: &Config<D>,
) -> Result<Vec<[u32; 2]>, Error> {
    find_pairs_in(&FINDERS, boxes, config)
}

/// Drops the buffers that [`find_pairs`](crate::find_pairs) and
/// [`find_pairs_with`](crate::find_pairs_with) keep between calls (at most four finders a
/// dimension, each about the size of the largest call it served), for after an outsized
/// call: the next call allocates what it needs again. A finder in use by a call running
/// at the time goes back to the cache when that call ends.
///
/// ```
/// use broadphase::{find_pairs, release_cached_buffers, Aabb2};
/// // 100,000 boxes in rows of 1,000, each touching the box above it.
/// let boxes: Vec<Aabb2> = (0..100_000)
///     .map(|i| {
///         let (x, y) = ((i % 1000) as f32, (i / 1000) as f32);
///         Aabb2::new([x, y], [x + 0.5, y + 1.0])
///     })
///     .collect();
/// assert_eq!(find_pairs(&boxes)?.len(), 99_000); // its finder's buffers are kept
/// release_cached_buffers(); // and dropped here
/// assert_eq!(find_pairs(&boxes[..1001])?, vec![[0, 1000]]);
/// # Ok::<(), broadphase::Error>(())
/// ```
pub fn release_cached_buffers() {
    FINDERS.clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::internals::{cliffs, scene};
    use crate::{brute_force_pairs, BoxProblem, Method};

    /// `find_pairs_in` on `pool` against a fresh `Broadphase` (pairs and errors) and, where
    /// it succeeds, the brute force.
    fn check<const D: usize>(
        pool: &Pool,
        boxes: &[Aabb<D>],
        config: &Config<D>,
        ctx: &str,
    ) -> Result<Vec<[u32; 2]>, Error> {
        let got = find_pairs_in(pool, boxes, config);
        let fresh = Broadphase::new(*config).and_then(|mut bp| {
            let mut out = Vec::new();
            bp.find_pairs(boxes, &mut out).map(|()| out)
        });
        assert_eq!(got, fresh, "{ctx}: pooled and fresh finders disagree");
        if let Ok(pairs) = &got {
            assert_eq!(pairs, &brute_force_pairs(boxes, config).unwrap(), "{ctx}: brute force");
        }
        got
    }

    /// The address of the one finder `pool` keeps for `D`.
    fn kept<const D: usize>(pool: &Pool, ctx: &str) -> usize {
        assert_eq!(pool.count::<Broadphase<D>>(), 1, "{ctx}: finders kept");
        let finder = pool.take::<Broadphase<D>>().unwrap();
        let at = &*finder as *const Broadphase<D> as usize;
        pool.put(finder);
        at
    }

    /// One finder serves a run of calls of different sizes, scenes and configurations,
    /// failed calls among them, and each call gives what a fresh finder and the brute
    /// force give.
    fn one_finder_serves_every_call_in<const D: usize>() {
        let pool = Pool::new();
        let big = scene::uniform::<D>(6000, 1);
        let calls: Vec<(&str, Vec<Aabb<D>>, Config<D>)> = vec![
            ("uniform 3000", scene::uniform(3000, 2), Config::default()),
            ("varied 500, margin", scene::varied(500, 3), Config::default().with_margin(0.4)),
            ("empty", Vec::new(), Config::default()),
            ("one box", scene::uniform(1, 4), Config::default()),
            ("uniform 6000, bounded", big.clone(), Config::default().with_max_pairs(Some(10))),
            ("uniform 6000", big.clone(), Config::default()),
            ("mixed 4000, columns", scene::mixed(4000, 5), Config::default().with_method(Method::Columns)),
            ("mixed 4000, sweep", scene::mixed(4000, 5), Config::default().with_method(Method::Sweep)),
            ("varied 2000, tree", scene::varied(2000, 6), Config::default().with_method(Method::Tree)),
            (
                "varied 2000, quadtree",
                scene::varied(2000, 6),
                Config::default().with_method(Method::Quadtree),
            ),
            (
                "uniform 6000, tree bounded",
                big.clone(),
                Config::default().with_method(Method::Tree).with_max_pairs(Some(3)),
            ),
            (
                "uniform 200, huge bounds",
                scene::uniform(200, 7),
                Config::default().with_bounds(Some(Aabb { min: [-1e9; D], max: [1e9; D] })),
            ),
            ("uniform 6000 again", big, Config::default().with_margin(0.1)),
        ];
        let mut first = None;
        for (label, boxes, config) in &calls {
            let ctx = format!("D = {D}, {label}");
            let got = check(&pool, boxes, config, &ctx);
            if let Some(limit) = config.max_pairs {
                assert_eq!(got, Err(Error::TooManyPairs { limit }), "{ctx}");
            } else {
                got.unwrap_or_else(|e| panic!("{ctx}: {e:?}"));
            }
            let at = kept::<D>(&pool, &ctx);
            assert_eq!(*first.get_or_insert(at), at, "{ctx}: the finder was not reused");
        }
    }

    #[test]
    fn one_finder_serves_every_call() {
        one_finder_serves_every_call_in::<2>();
        one_finder_serves_every_call_in::<3>();
    }

    /// An invalid box or configuration is refused as a fresh finder refuses it; the finder
    /// goes back (none is made for a bad configuration) and serves the next call.
    #[test]
    fn errors_are_a_fresh_finders_and_leave_it_usable() {
        let pool = Pool::new();
        let good = scene::varied::<3>(3000, 8);
        let mut bad = good.clone();
        bad[1700].max[1] = f32::NAN;
        let nan_margin = Config::default().with_margin(f32::NAN);
        assert!(matches!(check(&pool, &good, &nan_margin, "bad config"), Err(Error::InvalidConfig { .. })));
        assert_eq!(pool.count::<Broadphase<3>>(), 0, "a finder made for a bad configuration");
        check(&pool, &good, &Config::default(), "good").unwrap();
        let at = kept::<3>(&pool, "good");
        let got = check(&pool, &bad, &Config::default(), "bad box");
        assert_eq!(got, Err(Error::InvalidBox { index: 1700, problem: BoxProblem::NaN }));
        assert_eq!(kept::<3>(&pool, "bad box"), at);
        check(&pool, &good, &Config::default().with_margin(0.2), "good after a bad box").unwrap();
        assert_eq!(kept::<3>(&pool, "good after a bad box"), at);
    }

    /// Regression: the finder that a pooled finder keeps for the boxes parked far away
    /// (`Broadphase::pairs_apart`) once kept the margin of the call that made it. Parked
    /// boxes 1.5 apart pair with a margin of 0.3, not without one.
    #[test]
    fn margin_change_reaches_the_finder_set_apart() {
        let pool = Pool::new();
        let mut boxes = cliffs::parked::<3>(3000, 1.0, 1e5, 9);
        for (k, b) in boxes.iter_mut().step_by(100).enumerate() {
            let min = [1e5 + 1.5 * k as f32, 1e5, 1e5];
            *b = Aabb { min, max: min.map(|x| x + 1.0) };
        }
        for margin in [0.0, 0.3, 0.0, 0.3] {
            let config = Config::default().with_margin(margin);
            let ctx = format!("margin {margin}");
            let pairs = check(&pool, &boxes, &config, &ctx).unwrap();
            let parked = pairs.iter().filter(|p| p[0] % 100 == 0 && p[1] % 100 == 0).count();
            assert_eq!(parked, if margin > 0.0 { 29 } else { 0 }, "{ctx}: pairs of parked boxes");
            let finder = pool.take::<Broadphase<3>>().unwrap();
            assert!(!finder.cols.strays.far.is_empty() && finder.apart.is_some(), "{ctx}: none set apart");
            pool.put(finder);
        }
    }

    /// Threads calling at once each get a finder (the pool's or a new one) and the right
    /// pairs, on a pool of their own and on the process-wide one; no more than
    /// `PER_TYPE` finders a dimension are kept afterwards.
    #[test]
    fn threads_calling_at_once_agree_with_brute_force() {
        let pool = Pool::new();
        let scenes: Vec<(Vec<Aabb<3>>, Config<3>)> = (0..4)
            .map(|k| {
                (
                    scene::varied::<3>(1000 + 1500 * k, 10 + k as u64),
                    Config::default().with_margin(0.1 * k as f32),
                )
            })
            .collect();
        let flat: Vec<(Vec<Aabb<2>>, Config<2>)> =
            (0..3).map(|k| (scene::uniform::<2>(500 + 2000 * k, 20 + k as u64), Config::default())).collect();
        let want3: Vec<_> = scenes.iter().map(|(b, c)| brute_force_pairs(b, c).unwrap()).collect();
        let want2: Vec<_> = flat.iter().map(|(b, c)| brute_force_pairs(b, c).unwrap()).collect();
        let start = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            for t in 0..8 {
                let (pool, start, scenes, flat, want3, want2) =
                    (&pool, &start, &scenes, &flat, &want3, &want2);
                s.spawn(move || {
                    start.wait();
                    for round in 0..3 {
                        let k = (t + round) % scenes.len();
                        let (boxes, config) = &scenes[k];
                        let ctx = format!("thread {t}, round {round}, 3D scene {k}");
                        assert_eq!(find_pairs_in(pool, boxes, config).as_ref(), Ok(&want3[k]), "{ctx}");
                        assert_eq!(find_pairs_cached(boxes, config).as_ref(), Ok(&want3[k]), "{ctx}, shared");
                        let k = (t + round) % flat.len();
                        let (boxes, config) = &flat[k];
                        let ctx = format!("thread {t}, round {round}, 2D scene {k}");
                        assert_eq!(find_pairs_in(pool, boxes, config).as_ref(), Ok(&want2[k]), "{ctx}");
                    }
                });
            }
        });
        for (n, count) in [(3, pool.count::<Broadphase<3>>()), (2, pool.count::<Broadphase<2>>())] {
            assert!((1..=PER_TYPE).contains(&count), "{n}D: {count} finders kept");
        }
    }

    /// The pooled finder gives the same bytes on every thread count.
    #[test]
    fn same_bytes_on_every_thread_count() {
        let pool = Pool::new();
        let boxes = scene::varied::<3>(6000, 11);
        let config = Config::default();
        let want = brute_force_pairs(&boxes, &config).unwrap();
        for threads in [1, 2, 3, 4, 7, 16] {
            let workers = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let got = workers.install(|| find_pairs_in(&pool, &boxes, &config)).unwrap();
            assert!(got == want, "{threads} threads");
        }
        assert_eq!(pool.count::<Broadphase<3>>(), 1);
    }

    /// At most `PER_TYPE` values a type are kept, the latest taken first; a cleared pool
    /// keeps none, and the next call makes a finder again.
    #[test]
    fn pool_is_bounded_by_type_and_clears() {
        let pool = Pool::new();
        for k in 0..6u32 {
            pool.put(Box::new(k));
        }
        pool.put(Box::new(7u64));
        assert_eq!((pool.count::<u32>(), pool.count::<u64>()), (PER_TYPE, 1));
        assert_eq!(pool.take::<u32>().map(|b| *b), Some(PER_TYPE as u32 - 1));
        assert_eq!(pool.take::<u64>().map(|b| *b), Some(7));
        assert_eq!(pool.take::<u64>(), None);
        pool.clear();
        assert_eq!(pool.count::<u32>(), 0);
        let boxes = scene::uniform::<2>(2000, 12);
        check(&pool, &boxes, &Config::default(), "after clear").unwrap();
        assert_eq!(pool.count::<Broadphase<2>>(), 1);
    }

    /// After `release_cached_buffers` the process-wide pool still serves calls.
    #[test]
    fn release_cached_buffers_then_call_again() {
        let boxes = scene::uniform::<3>(4000, 13);
        let want = brute_force_pairs(&boxes, &Config::default()).unwrap();
        assert_eq!(crate::find_pairs(&boxes).unwrap(), want);
        release_cached_buffers();
        assert_eq!(crate::find_pairs(&boxes).unwrap(), want);
        assert_eq!(
            crate::find_pairs_with(&boxes[..1000], &Config::default().with_margin(0.5)).unwrap(),
            brute_force_pairs(&boxes[..1000], &Config::default().with_margin(0.5)).unwrap()
        );
    }

    /// A poisoned pool is passed by: calls still succeed, neither taking nor keeping a
    /// finder; clearing it still drops what it kept.
    #[test]
    fn poisoned_pool_is_skipped() {
        let pool = Pool::new();
        pool.put(Box::new(Broadphase::<2>::new(Config::default()).unwrap()));
        let poison = std::thread::scope(|s| {
            s.spawn(|| {
                let _held = pool.slots.lock().unwrap();
                panic!("poisoning the pool on purpose");
            })
            .join()
        });
        assert!(poison.is_err() && pool.slots.is_poisoned());
        let boxes = scene::uniform::<2>(3000, 14);
        check(&pool, &boxes, &Config::default(), "poisoned").unwrap();
        let kept = |pool: &Pool| pool.slots.lock().unwrap_or_else(|e| e.into_inner()).len();
        assert_eq!(kept(&pool), 1, "the poisoned pool was used");
        pool.clear();
        assert_eq!(kept(&pool), 0);
    }
}
