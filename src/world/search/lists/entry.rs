//! A neighbour list's entries: a listed object's id and its box in 16-bit steps of the
//! box the list was made for (its fat box), 16 bytes in 3D where the id and the box took 28.
//!
//! - Input: the list's fat box, and each listed object's box (one that meets the fat box
//!   and is not inside out): a static object's box grown by the margin, named by slot, or
//!   another dynamic leaf's box, named by leaf position. Output: an [`Entry`], and from it
//!   two boxes: an outer one that holds the object's box clipped to the fat box and an
//!   inner one that the clipped box holds (on each axis, the inner bounds lie inside the
//!   clipped bounds; the inner box may be inside out).
//! - Why clipping is exact: a list is read only for a region its fat box holds, and every
//!   box tested against the entry (the changed object's boxes then and now) lies in the
//!   region, so an object's box meets such a box exactly where its part inside the fat box
//!   does.
//! - The test ([`Listed::meets`]): a box that misses the outer box misses the object, one
//!   that meets the inner box meets it; between the two (a face within a step of the other
//!   box's, such as touching boxes) the caller loads the object's exact box. A step is a
//!   65,534th of the fat box's side, so that happens only near contact. The leaf lists
//!   read the outer box alone, as a filter before the exact test.
//! - Cost: a few multiply-adds an entry. Threads: none. Allocation: none.
//! - Source: quantised bounding boxes as in compressed BVHs (Mahovsky's and Wald's
//!   reduced-precision boxes): rounded outward for a conservative test, here with an
//!   inward rounding beside it to settle most tests without the exact box.

use crate::Aabb;

/// The largest code: the grid's last step ends at or past the fat box's max.
const QMAX: u32 = 65_534;

/// An object near a dynamic leaf: its id, and its box clipped to the list's fat box in
/// steps of the fat box ([`Grid`]). `min[k]` is the last step at or below the box's min,
/// `max[k]` the first at or above its max.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::world::search) struct Entry<const D: usize> {
    /// A static object's slot (in a static list) or a dynamic leaf's position (in a leaf
    /// list).
    pub(in crate::world::search) id: u32,
    pub(in crate::world::search) min: [u16; D],
    pub(in crate::world::search) max: [u16; D],
}

impl<const D: usize> Entry<D> {
    /// An entry that names no object (spare room in an arena).
    pub(in crate::world::search) fn placeholder() -> Self {
        Self { id: u32::MAX, min: [0; D], max: [0; D] }
    }
}

/// The steps of one fat box: step `q` on axis `k` is at `origin[k] + q * step[k]`, rounded
/// as f32 arithmetic rounds it (never decreasing in `q`), and step [`QMAX`] is at or past
/// the fat box's max, `end[k]`. Steps may run many past `end` (a fat box a few subnormal
/// steps wide has no finer grid), so boxes are clipped to `end`, not to the last step.
#[derive(Clone, Copy, Debug)]
pub(in crate::world::search) struct Grid<const D: usize> {
    origin: [f32; D],
    step: [f32; D],
    end: [f32; D],
}

/// How a box stands against a listed object: surely apart, surely meeting, or too close
/// to tell from the steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::world::search) enum Meets {
    No,
    Yes,
    Unsure,
}

impl<const D: usize> Grid<D> {
    /// The steps of `fat` (a finite box, not inside out).
    /// None where a step or the last one is not finite (a fat box near the ends of
    /// f32's range): such a box keeps no list.
    #[inline]
    pub(in crate::world::search) fn new(fat: &Aabb<D>) -> Option<Self> {
        let origin = fat.min;
        let mut step = [0.0f32; D];
        for k in 0..D {
            let mut s = (fat.max[k] - fat.min[k]) / QMAX as f32;
            // Rounding may leave the last step short of the max: lengthen the step, by
            // an increment that doubles each time, until it is not. The increment starts
            // at an ulp of the step, or the least subnormal where the step is subnormal
            // (or zero), so the last step ends as near the max as f32 allows.
            let mut more = f32::from_bits(1).max(s * f32::EPSILON);
            while s.is_finite() && origin[k] + QMAX as f32 * s < fat.max[k] {
                s += more;
                more *= 2.0;
            }
            if !(origin[k].is_finite() && s.is_finite() && (origin[k] + QMAX as f32 * s).is_finite()) {
                return None;
            }
            step[k] = s;
        }
        Some(Self { origin, step, end: fat.max })
    }

    #[inline(always)]
    fn at(&self, k: usize, q: i32) -> f32 {
        self.origin[k] + q as f32 * self.step[k]
    }

    /// The entry of the object `id` with box `g`, which meets the fat box and is not
    /// inside out.
    ///
    /// INVARIANT (the module's bracket, for any steps, however coarse): with `lo`, `hi`
    /// the box clipped to the fat box, `at(min) <= lo < at(min + 1)` (or `min` is the
    /// last code, whose step is at or past the fat box's max, so `at(min + 1) >= lo`),
    /// and `at(max - 1) < hi <= at(max)` (or `max` is 0, and `at(-1) <= origin <= hi`).
    /// `hi` is clipped to the fat box's max, not to the last step: where the steps run
    /// past the max, `at(max - 1)` could otherwise pass it.
    pub(in crate::world::search) fn encode(&self, id: u32, g: &Aabb<D>) -> Entry<D> {
        let mut min = [0u16; D];
        let mut max = [0u16; D];
        for k in 0..D {
            let (lo, hi) = (g.min[k].max(self.origin[k]), g.max[k].min(self.end[k]));
            min[k] = self.last_at_or_below(k, lo) as u16;
            max[k] = self.first_at_or_above(k, hi) as u16;
        }
        Entry { id, min, max }
    }

    /// The last code whose step is at or below `x` (`x` at or past the origin): the guess
    /// from the division where it is right, else a binary search over the codes (steps
    /// never decrease). Where the fat box is small beside its distance from 0 (a 1 m
    /// object half a million metres out), thousands of steps round to one value and a
    /// guess can be off by that many: the search bounds the cost at 16 steps.
    #[inline]
    fn last_at_or_below(&self, k: usize, x: f32) -> i32 {
        let q = self.guess(k, x);
        if self.at(k, q) <= x && (q == QMAX as i32 || self.at(k, q + 1) > x) {
            return q;
        }
        // INVARIANT: `at(a) <= x`, and `b` is past the last code or `at(b) > x`.
        let (mut a, mut b) = (0, QMAX as i32 + 1);
        while b - a > 1 {
            let m = (a + b) / 2;
            if self.at(k, m) <= x {
                a = m;
            } else {
                b = m;
            }
        }
        a
    }

    /// The first code whose step is at or above `x` (`x` at or before the last step), as
    /// [`Grid::last_at_or_below`].
    #[inline]
    fn first_at_or_above(&self, k: usize, x: f32) -> i32 {
        let q = self.guess(k, x);
        if self.at(k, q) >= x && (q == 0 || self.at(k, q - 1) < x) {
            return q;
        }
        // INVARIANT: `a` is before the first code or `at(a) < x`, and `at(b) >= x`.
        let (mut a, mut b) = (-1, QMAX as i32);
        while b - a > 1 {
            let m = (a + b) / 2;
            if self.at(k, m) >= x {
                b = m;
            } else {
                a = m;
            }
        }
        b
    }

    fn guess(&self, k: usize, x: f32) -> i32 {
        if self.step[k] > 0.0 {
            (((x - self.origin[k]) / self.step[k]) as i32).clamp(0, QMAX as i32)
        } else {
            0
        }
    }

    /// The box that holds the entry's clipped box.
    #[inline(always)]
    pub(in crate::world::search) fn outer(&self, e: &Entry<D>) -> Aabb<D> {
        Aabb {
            min: std::array::from_fn(|k| self.at(k, e.min[k] as i32)),
            max: std::array::from_fn(|k| self.at(k, e.max[k] as i32)),
        }
    }

    /// The box the entry's clipped box holds (axis by axis; it may be inside out): one
    /// step in from the outer box, which is inside the clipped box by the way the codes
    /// were chosen.
    #[inline(always)]
    pub(in crate::world::search) fn inner(&self, e: &Entry<D>) -> Aabb<D> {
        Aabb {
            min: std::array::from_fn(|k| self.at(k, e.min[k] as i32 + 1)),
            max: std::array::from_fn(|k| self.at(k, e.max[k] as i32 - 1)),
        }
    }
}

/// An entry's outer and inner boxes, for its tests.
#[derive(Clone, Copy, Debug)]
pub(in crate::world::search) struct Listed<const D: usize> {
    pub(in crate::world::search) outer: Aabb<D>,
    pub(in crate::world::search) inner: Aabb<D>,
}

impl<const D: usize> Listed<D> {
    /// Whether `b` (a box inside the list's fat box) meets the entry's object, as closed
    /// boxes: from the outer and inner boxes where they settle it. (`overlaps` compares
    /// bounds only, so an inner box inside out still settles: its bounds lie inside the
    /// object's.)
    #[inline(always)]
    pub(in crate::world::search) fn meets(&self, b: &Aabb<D>) -> Meets {
        if !b.overlaps(&self.outer) {
            Meets::No
        } else if b.overlaps(&self.inner) {
            Meets::Yes
        } else {
            Meets::Unsure
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::internals::scene::Rng;

    fn clipped<const D: usize>(g: &Aabb<D>, fat: &Aabb<D>) -> Aabb<D> {
        Aabb {
            min: std::array::from_fn(|k| g.min[k].max(fat.min[k])),
            max: std::array::from_fn(|k| g.max[k].min(fat.max[k])),
        }
    }

    /// A value near `at`, spread over six orders of magnitude, sometimes exactly `at`.
    fn near(rng: &mut Rng, at: f32, scale: f32) -> f32 {
        match rng.below(4) {
            0 => at,
            _ => at + rng.range(-1.0, 1.0) * scale * 10f32.powi(rng.below(7) as i32 - 3),
        }
    }

    /// Outer holds the clipped box, the clipped box holds inner, and every test agrees
    /// with the exact one where it answers, over random fat boxes and objects (far from
    /// the origin, zero size, touching a face, reaching past the fat box).
    #[test]
    fn outer_and_inner_bracket_the_clipped_box_and_tests_agree() {
        let mut rng = Rng::new(11);
        let mut unsure = 0;
        for _ in 0..20_000 {
            let c: [f32; 3] = std::array::from_fn(|_| rng.range(-1.0, 1.0) * 10f32.powi(rng.below(7) as i32));
            let side = 10f32.powi(rng.below(7) as i32 - 3);
            let h: [f32; 3] =
                std::array::from_fn(|_| if rng.below(8) == 0 { 0.0 } else { rng.range(0.1, 1.0) * side });
            let fat =
                Aabb::<3>::new(std::array::from_fn(|k| c[k] - h[k]), std::array::from_fn(|k| c[k] + h[k]));
            let grid = Grid::new(&fat).unwrap();
            let mut g = fat;
            for k in 0..3 {
                let (a, b) = (near(&mut rng, fat.min[k], side), near(&mut rng, fat.max[k], side));
                g.min[k] = a.min(b).min(fat.max[k]);
                g.max[k] = a.max(b).max(fat.min[k]);
            }
            let listed = bracket(&grid, &fat, &g);
            let clip = clipped(&g, &fat);
            // A box inside the fat box, near the object's faces.
            let mut b = fat;
            for k in 0..3 {
                let (x, y) = (near(&mut rng, clip.max[k], side), near(&mut rng, clip.min[k], side));
                b.min[k] = x.min(y).clamp(fat.min[k], fat.max[k]);
                b.max[k] = x.max(y).clamp(fat.min[k], fat.max[k]);
            }
            // And one anywhere in the fat box: a step away from every face but rarely.
            let mut r = fat;
            for k in 0..3 {
                let (x, y) = (rng.range(fat.min[k], fat.max[k]), rng.range(fat.min[k], fat.max[k]));
                r.min[k] = x.min(y).clamp(fat.min[k], fat.max[k]);
                r.max[k] = x.max(y).clamp(fat.min[k], fat.max[k]);
            }
            for (i, b) in [b, r].iter().enumerate() {
                match listed.meets(b) {
                    Meets::Yes => assert!(b.overlaps(&g), "{b:?} said to meet {g:?}"),
                    Meets::No => assert!(!b.overlaps(&g), "{b:?} said to miss {g:?}"),
                    Meets::Unsure => unsure += i,
                }
            }
        }
        assert!(unsure < 20_000 / 100, "{unsure} tests of boxes anywhere unsettled");
    }

    /// `g` encoded in `grid` (of `fat`), its outer box checked to hold the box clipped to
    /// `fat` and its inner box to be held by it.
    fn bracket<const D: usize>(grid: &Grid<D>, fat: &Aabb<D>, g: &Aabb<D>) -> Listed<D> {
        let e = grid.encode(3, g);
        let (clip, outer, inner) = (clipped(g, fat), grid.outer(&e), grid.inner(&e));
        for k in 0..D {
            assert!(
                outer.min[k] <= clip.min[k] && clip.max[k] <= outer.max[k],
                "{g:?} in {fat:?}: {outer:?}"
            );
            assert!(
                inner.min[k] >= clip.min[k] && inner.max[k] <= clip.max[k],
                "{g:?} in {fat:?}: {inner:?}"
            );
        }
        Listed { outer, inner }
    }

    /// Checks the bracket of `g` in `grid` (of `fat`), and every test of `b` against it.
    fn check_bracket<const D: usize>(grid: &Grid<D>, fat: &Aabb<D>, g: &Aabb<D>, bs: &[Aabb<D>]) {
        let listed = bracket(grid, fat, g);
        for b in bs {
            match listed.meets(b) {
                Meets::Yes => assert!(b.overlaps(g), "{b:?} said to meet {g:?} in {fat:?}"),
                Meets::No => assert!(!b.overlaps(g), "{b:?} said to miss {g:?} in {fat:?}"),
                Meets::Unsure => {}
            }
        }
    }

    /// The red team's case: the fat box of a 1.2e-38-wide dynamic sliver (its steps
    /// subnormal) beside a static box 1e-30 wide that reaches far past it. Before the
    /// fix, the steps ran past the fat box and the inner box with them.
    #[test]
    fn a_subnormal_sliver_beside_a_wide_static() {
        for x in [0.0f32, 1e-30, -1e-30, 3e-36] {
            let w = 1.2e-38f32;
            let sliver = Aabb::<2>::new([x, 0.0], [x + w, w]);
            // As the search grows a dynamic box for its list: by half its longest side.
            let fat = sliver.grown(0.5 * w);
            let grid = Grid::new(&fat).unwrap();
            for (lo, hi) in [(x + w, x + 1e-30), (x + w / 2.0, x + 1e-30), (x - 1e-30, x + w / 4.0), (x, x)] {
                let g = Aabb::new([lo, -1e-30], [hi, 1e-30]);
                check_bracket(&grid, &fat, &g, &[sliver, fat]);
            }
        }
    }

    /// The bracket holds for fat boxes at subnormal and tiny scales (sides from one
    /// subnormal step to 1e-30, near 0, 1e-38 and 1e-30), whatever their steps: objects
    /// reaching far past the fat box, inside it, zero size, touching a face.
    #[test]
    fn outer_and_inner_bracket_at_subnormal_scales() {
        let mut rng = Rng::new(29);
        const CENTRES: [f32; 5] = [0.0, 1e-38, -1e-38, 1e-30, 3e-36];
        for _ in 0..5_000 {
            let c0 = CENTRES[rng.below(5)];
            let side = match rng.below(4) {
                0 => f32::from_bits(1 + rng.below(4096) as u32),
                _ => 10f32.powi(-(rng.below(16) as i32) - 30),
            };
            let c: [f32; 3] = std::array::from_fn(|_| c0 + rng.range(-1.0, 1.0) * side);
            let h: [f32; 3] =
                std::array::from_fn(|_| if rng.below(8) == 0 { 0.0 } else { rng.range(0.1, 1.0) * side });
            let fat =
                Aabb::<3>::new(std::array::from_fn(|k| c[k] - h[k]), std::array::from_fn(|k| c[k] + h[k]));
            let grid = Grid::new(&fat).unwrap();
            // An object near the fat box's faces, sometimes reaching a million times past.
            let mut g = fat;
            for k in 0..3 {
                let far = if rng.below(3) == 0 { 1e6 } else { 1.0 };
                let (a, b) = (near(&mut rng, fat.min[k], side * far), near(&mut rng, fat.max[k], side * far));
                g.min[k] = a.min(b).min(fat.max[k]);
                g.max[k] = a.max(b).max(fat.min[k]);
            }
            // Boxes inside the fat box: near the object's faces, and anywhere.
            let mut bs = [fat; 2];
            for k in 0..3 {
                let clip = clipped(&g, &fat);
                let (x, y) = (near(&mut rng, clip.max[k], side), near(&mut rng, clip.min[k], side));
                bs[0].min[k] = x.min(y).clamp(fat.min[k], fat.max[k]);
                bs[0].max[k] = x.max(y).clamp(fat.min[k], fat.max[k]);
                let (x, y) = (rng.range(fat.min[k], fat.max[k]), rng.range(fat.min[k], fat.max[k]));
                bs[1].min[k] = x.min(y).clamp(fat.min[k], fat.max[k]);
                bs[1].max[k] = x.max(y).clamp(fat.min[k], fat.max[k]);
            }
            check_bracket(&grid, &fat, &g, &bs);
        }
    }

    /// A grid's last step ends within a step, plus twice [`QMAX`] least subnormals, past
    /// the fat box's max, at every scale (sides from 1e-44 to 1e-26, steps subnormal or
    /// not): so the lists of tiny boxes are as fine as f32 allows. Lengthening a short
    /// step by at least `f32::MIN_POSITIVE` ran a subnormal grid some 7.7e-34 past.
    #[test]
    fn tiny_grids_end_near_the_fat_box() {
        let mut rng = Rng::new(31);
        for _ in 0..20_000 {
            let side = rng.range(1.0, 10.0) * 10f32.powi(-(rng.below(19) as i32) - 26);
            let lo = if rng.below(3) == 0 { 0.0 } else { -rng.range(0.0, 1.0) * side };
            let fat = Aabb::<1>::new([lo], [lo + side]);
            let grid = Grid::new(&fat).unwrap();
            let over = grid.at(0, QMAX as i32) - fat.max[0];
            let step = grid.step[0];
            assert!(
                over <= step + 2.0 * QMAX as f32 * f32::from_bits(1),
                "{fat:?}: step {step:e}, {over:e} past"
            );
        }
    }
}
