//! Sequential stand-ins for the part of rayon the crate uses (see [`super`]): the same
//! names, bounds as loose or looser, and the same results, on the calling thread.
//!
//! - Input and output: as rayon's. Every adaptor visits its input in order, so every
//!   result is the one rayon gives on one thread. Only the methods the crate calls are
//!   here: a stage that calls another rayon method fails to build without `parallel`
//!   (`.ci/run` builds both ways), and the method is added here.
//! - Cost: that of the `std::iter` adaptor underneath; `with_min_len` and `with_max_len`
//!   are no-ops. Threads: none. Allocation: a [`scope`]'s queue of spawned jobs, nothing
//!   else beyond what the caller collects.
//! - Source: rayon's API, mapped onto `std::iter`.

use std::cell::RefCell;
use std::iter::{Enumerate, Filter, FilterMap, FlatMap, Map, Zip};

/// The iterator traits, as `rayon::prelude` names them.
pub(crate) mod prelude {
    pub(crate) use super::{
        IndexedParallelIterator, IntoParallelIterator, IntoParallelRefIterator, IntoParallelRefMutIterator,
        ParallelExtend, ParallelIterator, ParallelSlice, ParallelSliceMut,
    };
}

/// One thread: the caller's.
pub(crate) fn current_num_threads() -> usize {
    1
}

/// The calling thread is the one worker, index 0 (as inside a rayon pool: the stages that
/// open a scope when called from outside any pool do not open one again).
pub(crate) fn current_thread_index() -> Option<usize> {
    Some(0)
}

/// Runs `a`, then `b`.
pub(crate) fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce() -> RB,
{
    let ra = a();
    (ra, b())
}

/// A job spawned into a [`Scope`].
type Job<'s> = Box<dyn FnOnce(&Scope<'s>) + 's>;

/// The jobs spawned into a [`scope`] and not run yet.
pub(crate) struct Scope<'s> {
    jobs: RefCell<Vec<Job<'s>>>,
}

impl std::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope").field("pending", &self.jobs.borrow().len()).finish()
    }
}

impl<'s> Scope<'s> {
    /// Queues `job`: it runs before the [`scope`] returns, after the job (or the scope's
    /// body) that spawned it, so no stack grows with a chain of spawns.
    pub(crate) fn spawn<F: FnOnce(&Scope<'s>) + 's>(&self, job: F) {
        self.jobs.borrow_mut().push(Box::new(job));
    }
}

/// Runs `op`, then every job spawned into the scope, the last spawned first (the order a
/// rayon worker runs its own jobs in), until none is left.
pub(crate) fn scope<'s, F, R>(op: F) -> R
where
    F: FnOnce(&Scope<'s>) -> R,
{
    let s = Scope { jobs: RefCell::new(Vec::new()) };
    let r = op(&s);
    loop {
        // The borrow ends before the job runs: a job spawns into the same queue.
        let job = s.jobs.borrow_mut().pop();
        match job {
            Some(job) => job(&s),
            None => return r,
        }
    }
}

/// A "parallel" iterator: a std iterator that offers rayon's methods (and not std's, so
/// that a call reads as the rayon one it stands for).
#[derive(Clone, Debug)]
pub(crate) struct Iter<I>(I);

impl<I: Iterator> IntoIterator for Iter<I> {
    type Item = I::Item;
    type IntoIter = I;
    fn into_iter(self) -> I {
        self.0
    }
}

/// `into_par_iter`, for everything that iterates.
pub(crate) trait IntoParallelIterator: IntoIterator + Sized {
    /// The same items, in order.
    fn into_par_iter(self) -> Iter<Self::IntoIter> {
        Iter(self.into_iter())
    }
}

impl<T: IntoIterator> IntoParallelIterator for T {}

/// `par_iter`, for everything whose shared reference iterates.
pub(crate) trait IntoParallelRefIterator<'a> {
    /// What `par_iter` returns.
    type Iter;
    /// The items by reference, in order.
    fn par_iter(&'a self) -> Self::Iter;
}

impl<'a, T: ?Sized + 'a> IntoParallelRefIterator<'a> for T
where
    &'a T: IntoIterator,
{
    type Iter = Iter<<&'a T as IntoIterator>::IntoIter>;
    fn par_iter(&'a self) -> Self::Iter {
        Iter(self.into_iter())
    }
}

/// `par_iter_mut`, for everything whose unique reference iterates.
pub(crate) trait IntoParallelRefMutIterator<'a> {
    /// What `par_iter_mut` returns.
    type Iter;
    /// The items by unique reference, in order.
    fn par_iter_mut(&'a mut self) -> Self::Iter;
}

impl<'a, T: ?Sized + 'a> IntoParallelRefMutIterator<'a> for T
where
    &'a mut T: IntoIterator,
{
    type Iter = Iter<<&'a mut T as IntoIterator>::IntoIter>;
    fn par_iter_mut(&'a mut self) -> Self::Iter {
        Iter(self.into_iter())
    }
}

/// `par_extend`, for every collection that extends.
pub(crate) trait ParallelExtend<T> {
    /// Appends the items, in order.
    fn par_extend<I: IntoIterator<Item = T>>(&mut self, items: I);
}

impl<T, C: Extend<T>> ParallelExtend<T> for C {
    fn par_extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        self.extend(items);
    }
}

/// Chunks of a slice.
pub(crate) trait ParallelSlice<T> {
    /// `chunks(n)`.
    fn par_chunks(&self, n: usize) -> Iter<std::slice::Chunks<'_, T>>;
}

impl<T> ParallelSlice<T> for [T] {
    fn par_chunks(&self, n: usize) -> Iter<std::slice::Chunks<'_, T>> {
        Iter(self.chunks(n))
    }
}

/// Chunks and sorts of a mutable slice.
pub(crate) trait ParallelSliceMut<T> {
    /// `chunks_mut(n)`.
    fn par_chunks_mut(&mut self, n: usize) -> Iter<std::slice::ChunksMut<'_, T>>;
    /// `sort_unstable()`.
    fn par_sort_unstable(&mut self)
    where
        T: Ord;
    /// `sort_unstable_by_key(key)`.
    fn par_sort_unstable_by_key<K: Ord, F: FnMut(&T) -> K>(&mut self, key: F);
}

impl<T> ParallelSliceMut<T> for [T] {
    fn par_chunks_mut(&mut self, n: usize) -> Iter<std::slice::ChunksMut<'_, T>> {
        Iter(self.chunks_mut(n))
    }
    fn par_sort_unstable(&mut self)
    where
        T: Ord,
    {
        self.sort_unstable();
    }
    fn par_sort_unstable_by_key<K: Ord, F: FnMut(&T) -> K>(&mut self, key: F) {
        self.sort_unstable_by_key(key);
    }
}

/// rayon's `ParallelIterator` methods that the crate calls, in order on one thread.
pub(crate) trait ParallelIterator: IntoIterator + Sized {
    /// `map`.
    fn map<R, F: FnMut(Self::Item) -> R>(self, f: F) -> Iter<Map<Self::IntoIter, F>> {
        Iter(self.into_iter().map(f))
    }
    /// `filter`.
    fn filter<P: FnMut(&Self::Item) -> bool>(self, p: P) -> Iter<Filter<Self::IntoIter, P>> {
        Iter(self.into_iter().filter(p))
    }
    /// `filter_map`.
    fn filter_map<R, F: FnMut(Self::Item) -> Option<R>>(self, f: F) -> Iter<FilterMap<Self::IntoIter, F>> {
        Iter(self.into_iter().filter_map(f))
    }
    /// `flat_map` whose closure returns a sequential iterator.
    fn flat_map_iter<U: IntoIterator, F: FnMut(Self::Item) -> U>(
        self,
        f: F,
    ) -> Iter<FlatMap<Self::IntoIter, U, F>> {
        Iter(self.into_iter().flat_map(f))
    }
    /// `for_each`.
    fn for_each<F: FnMut(Self::Item)>(self, f: F) {
        self.into_iter().for_each(f)
    }
    /// rayon's `reduce`: `identity()` for no items, else every item combined by `op`.
    fn reduce<ID, OP>(self, identity: ID, op: OP) -> Self::Item
    where
        ID: FnOnce() -> Self::Item,
        OP: FnMut(Self::Item, Self::Item) -> Self::Item,
    {
        self.into_iter().fold(identity(), op)
    }
    /// `sum`.
    fn sum<S: std::iter::Sum<Self::Item>>(self) -> S {
        self.into_iter().sum()
    }
    /// `any`: stops at the first item that passes, as rayon may.
    fn any<P: FnMut(Self::Item) -> bool>(self, p: P) -> bool {
        self.into_iter().any(p)
    }
    /// `collect`.
    fn collect<C: FromIterator<Self::Item>>(self) -> C {
        self.into_iter().collect()
    }
    /// `unzip`.
    fn unzip<A, B, FromA, FromB>(self) -> (FromA, FromB)
    where
        Self: IntoIterator<Item = (A, B)>,
        FromA: Default + Extend<A>,
        FromB: Default + Extend<B>,
    {
        self.into_iter().unzip()
    }
}

/// rayon's `IndexedParallelIterator` methods that the crate calls.
pub(crate) trait IndexedParallelIterator: ParallelIterator {
    /// `enumerate`.
    fn enumerate(self) -> Iter<Enumerate<Self::IntoIter>> {
        Iter(self.into_iter().enumerate())
    }
    /// `zip`.
    fn zip<Z: IntoIterator>(self, other: Z) -> Iter<Zip<Self::IntoIter, Z::IntoIter>> {
        Iter(self.into_iter().zip(other))
    }
    /// A hint on how rayon splits the work: nothing to split here.
    fn with_min_len(self, _min: usize) -> Self {
        self
    }
    /// As [`IndexedParallelIterator::with_min_len`].
    fn with_max_len(self, _max: usize) -> Self {
        self
    }
    /// Clears `v` and fills it with the items, in order.
    fn collect_into_vec(self, v: &mut Vec<Self::Item>) {
        v.clear();
        v.extend(self);
    }
    /// The index of the first item that passes.
    fn position_first<P: FnMut(Self::Item) -> bool>(self, p: P) -> Option<usize> {
        self.into_iter().position(p)
    }
}

impl<I: Iterator> ParallelIterator for Iter<I> {}
impl<I: Iterator> IndexedParallelIterator for Iter<I> {}

#[cfg(test)]
mod tests {
    use super::prelude::*;
    use super::{current_num_threads, current_thread_index, join, scope};
    use std::sync::Mutex;

    /// What rayon gives for the same calls, on any number of threads: the results of the
    /// std iterators.
    #[test]
    fn the_same_results_as_rayon() {
        let v: Vec<u64> = (0..1000).map(|i| (i * 7919) % 1009).collect();
        let sum: u64 = v.par_chunks(100).map(|c| c.iter().sum()).reduce(|| 0, |a, b| a + b);
        assert_eq!(sum, v.par_iter().sum::<u64>());
        assert_eq!(Vec::<u64>::new().into_par_iter().reduce(|| 5, |a, b| a + b), 5);
        let mut out = vec![1, 2, 3];
        v.par_iter().with_min_len(64).enumerate().map(|(i, &x)| x + i as u64).collect_into_vec(&mut out);
        assert_eq!(out, v.iter().enumerate().map(|(i, &x)| x + i as u64).collect::<Vec<_>>());
        assert_eq!(v.par_iter().position_first(|&x| x == v[500]), v.iter().position(|&x| x == v[500]));
        let flat: Vec<u64> = (0..5u64).into_par_iter().flat_map_iter(|i| 0..i).collect();
        assert_eq!(flat, [0, 0, 1, 0, 1, 2, 0, 1, 2, 3]);
        let (a, b): (Vec<u64>, Vec<u64>) = v.par_chunks(7).map(|c| (c[0], c.len() as u64)).unzip();
        assert_eq!((a.len(), b.iter().sum::<u64>()), (143, 1000));
        let mut w = v.clone();
        w.par_chunks_mut(10).zip(v.par_chunks(10)).with_max_len(1).for_each(|(d, s)| d[0] = s[1]);
        assert_eq!((w[0], w[10]), (v[1], v[11]));
        let mut e: Vec<u64> = Vec::new();
        e.par_extend(v.par_iter().filter(|&&x| x < 100).filter_map(|&x| x.checked_sub(50)));
        assert_eq!(e, v.iter().filter(|&&x| (50..100).contains(&x)).map(|x| x - 50).collect::<Vec<_>>());
        w.par_iter_mut().for_each(|x| *x += 1);
        w.par_sort_unstable();
        assert!(w.windows(2).all(|p| p[0] <= p[1]) && w.par_iter().any(|&x| x == 1009));
        let mut pairs: Vec<(u64, u64)> = v.iter().map(|&x| (x % 13, x)).collect();
        pairs.par_sort_unstable_by_key(|p| p.0);
        assert!(pairs.windows(2).all(|p| p[0].0 <= p[1].0));
    }

    /// `join` and `scope` run everything on the calling thread, the one worker; a chain
    /// of spawns runs to its end without nesting stacks.
    #[test]
    fn join_and_scope_run_everything_here() {
        assert_eq!((current_num_threads(), current_thread_index()), (1, Some(0)));
        let order = Mutex::new(Vec::new());
        let (a, b) = join(|| order.lock().unwrap().push(1), || order.lock().unwrap().push(2));
        assert_eq!((a, b), ((), ()));
        fn chain<'s>(sc: &super::Scope<'s>, k: u32, done: &'s Mutex<Vec<u32>>) {
            done.lock().unwrap().push(k);
            if k < 100_000 {
                sc.spawn(move |sc| chain(sc, k + 1, done));
            }
        }
        let done = Mutex::new(Vec::new());
        let r = scope(|sc| {
            chain(sc, 0, &done);
            7
        });
        assert_eq!(r, 7);
        assert_eq!(*order.lock().unwrap(), [1, 2]);
        assert_eq!(done.into_inner().unwrap(), (0..=100_000).collect::<Vec<_>>());
    }
}
