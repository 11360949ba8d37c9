//! The data of `benches/queries.rs` (the queries, the dynamic crowd), our batches' reused
//! outputs, and the check of every side's answers against our single queries.

use crate::peer::{Answers, Loops, Ours, Peer, QKind, Queries};
use crate::{Opts, SEED};
use broadphase::internals::scene::Rng;
use broadphase::{Aabb, Batch, Handle, QueryFilter, Ray, Sphere, Sweep};
use std::hint::black_box;

// ---------------------------------------------------------------------------------------
// The queries.

/// The bounds of every box.
fn bounds<const D: usize>(boxes: &[Aabb<D>]) -> Aabb<D> {
    let mut b = Aabb::new([f32::INFINITY; D], [f32::NEG_INFINITY; D]);
    for x in boxes {
        for k in 0..D {
            b.min[k] = b.min[k].min(x.min[k]);
            b.max[k] = b.max[k].max(x.max[k]);
        }
    }
    b
}

/// The cube of half side `r` around `c`.
fn cube<const D: usize>(c: &[f32; D], r: f32) -> Aabb<D> {
    Aabb::new(std::array::from_fn(|k| c[k] - r), std::array::from_fn(|k| c[k] + r))
}

/// Mean hits of the cubes of half side `r` around `centres`.
fn mean_hits<const D: usize>(ours: &Ours<D>, centres: &[[f32; D]], r: f32) -> f64 {
    let mut n = 0usize;
    for c in centres {
        let _ = ours.world.query_aabb_each(cube(c, r), QueryFilter::new(), |_| {
            n += 1;
            std::ops::ControlFlow::Continue(())
        });
    }
    n as f64 / centres.len().max(1) as f64
}

/// The half side whose cubes around `centres` (up to 256 of them) average `target` hits:
/// doubled from a small start until past it, then bisected.
fn half_side_for<const D: usize>(ours: &Ours<D>, centres: &[[f32; D]], target: f64, extent: f32) -> f32 {
    let sample = &centres[..centres.len().min(256)];
    let mut hi = 0.01f32;
    while mean_hits(ours, sample, hi) < target && hi < extent {
        hi *= 2.0;
    }
    let mut lo = hi * 0.5;
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        let m = mean_hits(ours, sample, mid);
        if (m / target - 1.0).abs() < 0.01 {
            return mid;
        }
        if m < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

pub fn make_queries<const D: usize>(
    ours: &Ours<D>,
    boxes: &[Aabb<D>],
    opts: &Opts,
    label: &str,
) -> Queries<D> {
    let b = bounds(boxes);
    let size: [f32; D] = std::array::from_fn(|k| b.max[k] - b.min[k]);
    let extent = size.iter().copied().fold(0.0, f32::max);
    let diagonal = size.iter().map(|s| s * s).sum::<f32>().sqrt();
    let mut rng = Rng::new(SEED ^ 0x51_7E);
    let mut centres = |n: usize| -> Vec<[f32; D]> {
        (0..n)
            .map(|_| {
                let x = boxes[rng.below(boxes.len())];
                std::array::from_fn(|k| rng.range(x.min[k], x.max[k]))
            })
            .collect()
    };
    let (small_c, large_c) = (centres(opts.n), centres(opts.n / 10));
    let r_small = half_side_for(ours, &small_c, opts.small_hits, extent);
    let r_large = half_side_for(ours, &large_c, opts.large_hits, extent);
    let mut rng = Rng::new(SEED ^ 0xB0_1D);
    let points: Vec<[f32; D]> =
        (0..opts.n).map(|_| std::array::from_fn(|k| rng.range(b.min[k], b.max[k]))).collect();
    let max_t = opts.ray_len * diagonal;
    let unit = |rng: &mut Rng| -> [f32; D] {
        loop {
            let d: [f32; D] = std::array::from_fn(|_| rng.range(-1.0, 1.0));
            let len = d.iter().map(|x| x * x).sum::<f32>().sqrt();
            if (0.1..=1.0).contains(&len) {
                break std::array::from_fn(|k| d[k] / len);
            }
        }
    };
    let rays = (0..opts.n)
        .map(|_| {
            let origin = std::array::from_fn(|k| rng.range(b.min[k], b.max[k]));
            Ray::new(origin, unit(&mut rng), max_t)
        })
        .collect();
    // Swept boxes: cubes of the small regions' half side, from uniform points, as far as a
    // ray goes.
    let sweeps = (0..opts.n)
        .map(|_| {
            let c: [f32; D] = std::array::from_fn(|k| rng.range(b.min[k], b.max[k]));
            Sweep::new(cube(&c, 0.5 * r_small), unit(&mut rng), max_t)
        })
        .collect();
    let qs = Queries {
        small: small_c.iter().map(|c| cube(c, r_small)).collect(),
        large: large_c.iter().map(|c| cube(c, r_large)).collect(),
        spheres: small_c.iter().map(|c| Sphere::new(*c, r_small)).collect(),
        points,
        rays,
        sweeps,
    };
    let mean = |k: QKind| ours.run(&qs, k, false) as f64 / qs.count(k).max(1) as f64;
    eprintln!(
        "{label}: spheres: the small regions' centres, radius their half side, mean hits {:.1}; sweeps: \
         cubes of side {:.3}, max_t as rays': {:.1}% hit",
        mean(QKind::Spheres),
        r_small,
        100.0 * mean(QKind::Sweeps),
    );
    eprintln!(
        "{label}: {} boxes in {b:?}\n{label}: regions_small: {} cubes of side {:.3}, mean hits {:.1}; \
         regions_large: {} of side {:.3}, mean hits {:.1}; points: {}, mean hits {:.3}\n{label}: rays: {}, \
         max_t {max_t:.2} ({} of the diagonal): rays_closest: {:.1}% hit; rays_all: mean hits {:.2}",
        boxes.len(),
        qs.small.len(),
        2.0 * r_small,
        mean(QKind::RegionsSmall),
        qs.large.len(),
        2.0 * r_large,
        mean(QKind::RegionsLarge),
        qs.points.len(),
        mean(QKind::Points),
        qs.rays.len(),
        opts.ray_len,
        100.0 * mean(QKind::RaysClosest),
        mean(QKind::RaysAll),
    );
    qs
}

// ---------------------------------------------------------------------------------------
// Our batches.

/// The batches' reused outputs.
#[derive(Default)]
pub struct BatchOut {
    handles: Batch<Handle>,
    hits: Batch<(Handle, f32)>,
    closest: Vec<Option<(Handle, f32)>>,
}

impl BatchOut {
    /// One batch call for every query of `kind`, on the current pool; the hits.
    pub fn run<const D: usize>(&mut self, ours: &Ours<D>, qs: &Queries<D>, kind: QKind) -> usize {
        let w = &ours.world;
        let all = QueryFilter::new();
        match kind {
            QKind::RegionsSmall => w.query_aabbs(&qs.small, all, &mut self.handles).unwrap(),
            QKind::RegionsLarge => w.query_aabbs(&qs.large, all, &mut self.handles).unwrap(),
            QKind::Points => w.query_points(&qs.points, all, &mut self.handles).unwrap(),
            QKind::Spheres => w.query_spheres(&qs.spheres, all, &mut self.handles).unwrap(),
            QKind::RaysClosest | QKind::Sweeps => {
                if kind == QKind::Sweeps {
                    w.cast_aabbs(&qs.sweeps, all, &mut self.closest).unwrap();
                } else {
                    w.cast_rays(&qs.rays, all, &mut self.closest).unwrap();
                }
                return black_box(&self.closest).iter().filter(|h| h.is_some()).count();
            }
            QKind::RaysAll | QKind::Nearest1 | QKind::Nearest10 => {
                if kind == QKind::RaysAll {
                    w.cast_rays_all(&qs.rays, usize::MAX, all, &mut self.hits).unwrap();
                } else {
                    w.nearest_to_points(&qs.points, kind.k(), f32::INFINITY, all, &mut self.hits).unwrap();
                }
                return black_box(&self.hits).items().len();
            }
        }
        black_box(&self.handles).items().len()
    }

    /// Whether the last batch answered every query as the single queries do.
    fn same_as_single<const D: usize>(&self, ours: &Ours<D>, qs: &Queries<D>, kind: QKind) -> bool {
        let (mut one, mut hits) = (Vec::new(), Vec::new());
        match kind {
            QKind::RegionsSmall | QKind::RegionsLarge | QKind::Points | QKind::Spheres => (0..qs.count(kind))
                .all(|i| {
                    match kind {
                        QKind::RegionsSmall => ours.region(&qs.small[i], &mut one),
                        QKind::RegionsLarge => ours.region(&qs.large[i], &mut one),
                        QKind::Spheres => ours.sphere(&qs.spheres[i], &mut one),
                        _ => ours.point(&qs.points[i], &mut one),
                    }
                    self.handles.get(i) == one.as_slice()
                }),
            QKind::RaysClosest => qs.rays.iter().zip(&self.closest).all(|(r, &c)| ours.ray_closest(r) == c),
            QKind::Sweeps => qs.sweeps.iter().zip(&self.closest).all(|(s, &c)| ours.sweep_closest(s) == c),
            QKind::RaysAll => qs.rays.iter().enumerate().all(|(i, r)| {
                ours.ray_all(r, &mut hits);
                self.hits.get(i) == hits.as_slice()
            }),
            QKind::Nearest1 | QKind::Nearest10 => qs.points.iter().enumerate().all(|(i, p)| {
                ours.nearest(p, kind.k(), &mut hits);
                self.hits.get(i) == hits.as_slice()
            }),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The check.

/// Whether `got` gives the answers of `want` (see the header for the tolerances); prints
/// a verdict.
fn agrees(what: &str, want: &Answers, got: &Answers, rays: &[f32]) -> bool {
    let near = |x: f32, y: f32| (x - y).abs() <= 1e-5 * x.abs().max(y.abs()).max(1.0);
    let bad: Vec<usize> = match (want, got) {
        (Answers::Sets(a), Answers::Sets(b)) => (0..a.len()).filter(|&i| a[i] != b[i]).collect(),
        (Answers::Closest(a), Answers::Closest(b)) => (0..a.len())
            .filter(|&i| !match (a[i], b[i]) {
                (None, None) => true,
                (Some((_, x)), Some((_, y))) => near(x, y),
                (Some((_, t)), None) | (None, Some((_, t))) => near(t, rays[i]),
            })
            .collect(),
        (Answers::Ranked(a), Answers::Ranked(b)) => (0..a.len())
            .filter(|&i| a[i].len() != b[i].len() || a[i].iter().zip(&b[i]).any(|(&x, &y)| !near(x, y)))
            .collect(),
        _ => unreachable!("answers of different kinds"),
    };
    let total = match want {
        Answers::Sets(a) => a.len(),
        Answers::Closest(a) => a.len(),
        Answers::Ranked(a) => a.len(),
    };
    if bad.is_empty() {
        println!("    {what}: {total} queries: ok");
        return true;
    }
    println!("    {what}: MISMATCH on {} of {total} queries", bad.len());
    for &i in bad.iter().take(3) {
        match (want, got) {
            (Answers::Sets(a), Answers::Sets(b)) => {
                let missing: Vec<_> =
                    a[i].iter().filter(|x| b[i].binary_search(x).is_err()).take(5).collect();
                let extra: Vec<_> = b[i].iter().filter(|x| a[i].binary_search(x).is_err()).take(5).collect();
                println!(
                    "      query {i}: ours {} hits, peer {}; missing {missing:?}, extra {extra:?}",
                    a[i].len(),
                    b[i].len()
                );
            }
            (Answers::Closest(a), Answers::Closest(b)) => {
                println!("      ray {i}: ours {:?}, peer {:?}", a[i], b[i])
            }
            (Answers::Ranked(a), Answers::Ranked(b)) => {
                println!("      query {i}: ours {:?}, peer {:?}", a[i], b[i])
            }
            _ => {}
        }
    }
    false
}

/// Our single queries against our batches and against every peer.
pub fn check<const D: usize>(
    label: &str,
    ours: &Ours<D>,
    peers: &[Box<dyn Loops<D>>],
    qs: &Queries<D>,
    boxes: &[Aabb<D>],
) -> bool {
    println!("check {label}:");
    let mut ok = true;
    let mut batch = BatchOut::default();
    for kind in QKind::ALL {
        let max_t: Vec<f32> = match kind {
            QKind::Sweeps => qs.sweeps.iter().map(|s| s.max_t).collect(),
            _ => qs.rays.iter().map(|r| r.max_t).collect(),
        };
        let want = ours.answers(qs, kind, boxes);
        batch.run(ours, qs, kind);
        let same = batch.same_as_single(ours, qs, kind);
        println!("  {}: ours_batch {}", kind.name(), if same { "ok" } else { "MISMATCH with ours_single" });
        ok &= same;
        for p in peers.iter().filter(|p| p.runs(kind)) {
            ok &=
                agrees(&format!("{}: {}", kind.name(), p.name()), &want, &p.answers(qs, kind, boxes), &max_t);
        }
    }
    ok
}

/// `n` dynamic boxes, sides 0.5-1, each on top of a random static box, its bottom 0-0.3
/// below that box's top, jittered by up to 0.5 along the ground (as `benches/world.rs`).
pub fn crowd<const D: usize>(statics: &[Aabb<D>], n: usize) -> Vec<Aabb<D>> {
    let mut rng = Rng::new(SEED ^ 0xD1CE);
    (0..n)
        .map(|_| {
            let s = statics[rng.below(statics.len())];
            let h: [f32; D] = std::array::from_fn(|_| rng.range(0.25, 0.5));
            let mut c: [f32; D] = std::array::from_fn(|k| (s.min[k] + s.max[k]) * 0.5 + rng.range(-0.5, 0.5));
            c[D - 1] = s.max[D - 1] + h[D - 1] - rng.range(0.0, 0.3);
            Aabb::new(std::array::from_fn(|k| c[k] - h[k]), std::array::from_fn(|k| c[k] + h[k]))
        })
        .collect()
}
