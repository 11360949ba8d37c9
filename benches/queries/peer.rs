//! The sides of `benches/queries.rs`: ours (one `World` query a call) and the peers
//! (parry2d / parry3d's `Bvh`, geo-index's packed Hilbert R-tree, rstar's R*-tree), each
//! behind [`Peer`] (a side answers the kinds of query it offers, [`Peer::runs`]), and the
//! loops that run a set of queries through one of them.
//!
//! Every side answers with the indices of the boxes it was built from (ours with handles,
//! mapped to indices only for the check). The peers are generic in `D` so that one list of
//! them serves both dimensions; each is only ever built in its own dimension.

use broadphase::{Aabb, Config, Handle, Kind, QueryFilter, Ray, Sphere, Sweep, World};
use rayon::prelude::*;
use std::hint::black_box;

/// Queries a parallel work item runs in the loops over single queries (as the batches do).
const CHUNK: usize = 64;

/// A kind of query the bench times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QKind {
    RegionsSmall,
    RegionsLarge,
    Points,
    RaysClosest,
    RaysAll,
    Spheres,
    Nearest1,
    Nearest10,
    Sweeps,
}

impl QKind {
    pub const ALL: [QKind; 9] = [
        QKind::RegionsSmall,
        QKind::RegionsLarge,
        QKind::Points,
        QKind::RaysClosest,
        QKind::RaysAll,
        QKind::Spheres,
        QKind::Nearest1,
        QKind::Nearest10,
        QKind::Sweeps,
    ];

    pub fn name(self) -> &'static str {
        match self {
            QKind::RegionsSmall => "regions_small",
            QKind::RegionsLarge => "regions_large",
            QKind::Points => "points",
            QKind::RaysClosest => "rays_closest",
            QKind::RaysAll => "rays_all",
            QKind::Spheres => "spheres",
            QKind::Nearest1 => "nearest_k1",
            QKind::Nearest10 => "nearest_k10",
            QKind::Sweeps => "sweeps",
        }
    }

    /// The `k` of a nearest query.
    pub fn k(self) -> usize {
        if self == QKind::Nearest1 {
            1
        } else {
            10
        }
    }
}

/// The queries of one scene.
pub struct Queries<const D: usize> {
    pub small: Vec<Aabb<D>>,
    pub large: Vec<Aabb<D>>,
    pub points: Vec<[f32; D]>,
    pub rays: Vec<Ray<D>>,
    pub spheres: Vec<Sphere<D>>,
    pub sweeps: Vec<Sweep<D>>,
}

impl<const D: usize> Queries<D> {
    pub fn count(&self, kind: QKind) -> usize {
        match kind {
            QKind::RegionsSmall => self.small.len(),
            QKind::RegionsLarge => self.large.len(),
            QKind::Points | QKind::Nearest1 | QKind::Nearest10 => self.points.len(),
            QKind::RaysClosest | QKind::RaysAll => self.rays.len(),
            QKind::Spheres => self.spheres.len(),
            QKind::Sweeps => self.sweeps.len(),
        }
    }
}

/// What the check compares: per query, the sorted box indices, the closest hit, or the
/// distances of the nearest boxes in order.
#[derive(Debug, PartialEq)]
pub enum Answers {
    Sets(Vec<Vec<u32>>),
    Closest(Vec<Option<(u32, f32)>>),
    Ranked(Vec<Vec<f32>>),
}

/// The Euclidean distance from `p` to `b`, in `f64`.
pub fn distance<const D: usize>(p: &[f32; D], b: &Aabb<D>) -> f32 {
    let gap = |k: usize| (b.min[k] as f64 - p[k] as f64).max(p[k] as f64 - b.max[k] as f64).max(0.0);
    (0..D).map(|k| gap(k) * gap(k)).sum::<f64>().sqrt() as f32
}

/// One query a call, as each library offers it.
pub trait Peer<const D: usize>: Sync {
    /// What a hit names (ours: a handle; the peers: the box's index).
    type Id: Copy + Send + Sync;
    fn name(&self) -> &'static str;
    /// Whether the side offers queries of `kind`.
    fn runs(&self, kind: QKind) -> bool;
    /// The boxes overlapping `q` (closed), into `out` (replaced).
    fn region(&self, q: &Aabb<D>, out: &mut Vec<Self::Id>);
    /// The boxes holding `p` (closed), into `out` (replaced).
    fn point(&self, p: &[f32; D], out: &mut Vec<Self::Id>);
    /// The closest box the ray enters at `0 <= t <= max_t`, with its `t`.
    fn ray_closest(&self, _: &Ray<D>) -> Option<(Self::Id, f32)> {
        unreachable!("no ray casts")
    }
    /// Every box the ray enters, with its `t`, into `out` (replaced).
    fn ray_all(&self, _: &Ray<D>, _: &mut Vec<(Self::Id, f32)>) {
        unreachable!("no all-hits casts")
    }
    /// The boxes within the ball (closed), into `out` (replaced).
    fn sphere(&self, _: &Sphere<D>, _: &mut Vec<Self::Id>) {
        unreachable!("no sphere queries")
    }
    /// The `k` boxes nearest to `p`, nearest first, into `out` (replaced), with their
    /// distances where the side gives them (else NaN: the check measures them itself).
    fn nearest(&self, _: &[f32; D], _: usize, _: &mut Vec<(Self::Id, f32)>) {
        unreachable!("no nearest queries")
    }
    /// The first box the swept box touches, with its `t`.
    fn sweep_closest(&self, _: &Sweep<D>) -> Option<(Self::Id, f32)> {
        unreachable!("no swept boxes")
    }
    /// The index of the box `id` names.
    fn index(&self, id: Self::Id) -> u32;
}

/// The loops over a set of queries, for any [`Peer`]; object safe, so the sides of a
/// scene sit in one list while each loop is compiled for its side.
pub trait Loops<const D: usize>: Sync {
    fn name(&self) -> &'static str;
    fn runs(&self, kind: QKind) -> bool;
    /// Every query of `kind`, one call each: in order on this thread, or with `par` in
    /// chunks of [`CHUNK`] over the current rayon pool (one output `Vec` a work item).
    /// Returns the hits (closest: the rays that hit).
    fn run(&self, qs: &Queries<D>, kind: QKind, par: bool) -> usize;
    /// Each query's answer, for the check (`boxes`: the scene, to measure distances).
    fn answers(&self, qs: &Queries<D>, kind: QKind, boxes: &[Aabb<D>]) -> Answers;
}

/// `one(query, out)` for each query; the sum of what it returns.
fn sum_loop<Q: Sync, T: Send>(qs: &[Q], par: bool, one: impl Fn(&Q, &mut Vec<T>) -> usize + Sync) -> usize {
    if par {
        qs.par_chunks(CHUNK)
            .map_init(Vec::new, |out, chunk| chunk.iter().map(|q| one(q, out)).sum::<usize>())
            .sum()
    } else {
        let mut out = Vec::new();
        qs.iter().map(|q| one(q, &mut out)).sum()
    }
}

impl<const D: usize, P: Peer<D>> Loops<D> for P {
    fn name(&self) -> &'static str {
        Peer::name(self)
    }

    fn runs(&self, kind: QKind) -> bool {
        Peer::runs(self, kind)
    }

    fn run(&self, qs: &Queries<D>, kind: QKind, par: bool) -> usize {
        match kind {
            QKind::RegionsSmall | QKind::RegionsLarge => {
                let regions = if kind == QKind::RegionsSmall { &qs.small } else { &qs.large };
                sum_loop(regions, par, |q, out| {
                    self.region(q, out);
                    black_box(&out);
                    out.len()
                })
            }
            QKind::Points => sum_loop(&qs.points, par, |p, out| {
                self.point(p, out);
                black_box(&out);
                out.len()
            }),
            QKind::RaysClosest => sum_loop(&qs.rays, par, |r, _: &mut Vec<()>| {
                black_box(self.ray_closest(r)).is_some() as usize
            }),
            QKind::RaysAll => sum_loop(&qs.rays, par, |r, out| {
                self.ray_all(r, out);
                black_box(&out);
                out.len()
            }),
            QKind::Spheres => sum_loop(&qs.spheres, par, |s, out| {
                self.sphere(s, out);
                black_box(&out);
                out.len()
            }),
            QKind::Nearest1 | QKind::Nearest10 => sum_loop(&qs.points, par, |p, out| {
                self.nearest(p, kind.k(), out);
                black_box(&out);
                out.len()
            }),
            QKind::Sweeps => sum_loop(&qs.sweeps, par, |s, _: &mut Vec<()>| {
                black_box(self.sweep_closest(s)).is_some() as usize
            }),
        }
    }

    fn answers(&self, qs: &Queries<D>, kind: QKind, boxes: &[Aabb<D>]) -> Answers {
        let sorted = |ids: &mut dyn Iterator<Item = u32>| {
            let mut v: Vec<u32> = ids.collect();
            v.sort_unstable();
            v
        };
        let mut out = Vec::new();
        let mut hits = Vec::new();
        match kind {
            QKind::RegionsSmall | QKind::RegionsLarge => {
                let regions = if kind == QKind::RegionsSmall { &qs.small } else { &qs.large };
                Answers::Sets(
                    regions
                        .iter()
                        .map(|q| {
                            self.region(q, &mut out);
                            sorted(&mut out.iter().map(|&h| self.index(h)))
                        })
                        .collect(),
                )
            }
            QKind::Points => Answers::Sets(
                qs.points
                    .iter()
                    .map(|p| {
                        self.point(p, &mut out);
                        sorted(&mut out.iter().map(|&h| self.index(h)))
                    })
                    .collect(),
            ),
            QKind::RaysClosest => Answers::Closest(
                qs.rays.iter().map(|r| self.ray_closest(r).map(|(h, t)| (self.index(h), t))).collect(),
            ),
            QKind::RaysAll => Answers::Sets(
                qs.rays
                    .iter()
                    .map(|r| {
                        self.ray_all(r, &mut hits);
                        sorted(&mut hits.iter().map(|&(h, _)| self.index(h)))
                    })
                    .collect(),
            ),
            QKind::Spheres => Answers::Sets(
                qs.spheres
                    .iter()
                    .map(|s| {
                        self.sphere(s, &mut out);
                        sorted(&mut out.iter().map(|&h| self.index(h)))
                    })
                    .collect(),
            ),
            QKind::Nearest1 | QKind::Nearest10 => Answers::Ranked(
                qs.points
                    .iter()
                    .map(|p| {
                        self.nearest(p, kind.k(), &mut hits);
                        hits.iter().map(|&(h, _)| distance(p, &boxes[self.index(h) as usize])).collect()
                    })
                    .collect(),
            ),
            QKind::Sweeps => Answers::Closest(
                qs.sweeps.iter().map(|s| self.sweep_closest(s).map(|(h, t)| (self.index(h), t))).collect(),
            ),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Ours.

/// Our world: the boxes inserted as static objects in order, then one update.
pub struct Ours<const D: usize> {
    pub world: World<D>,
    /// Box index by handle slot.
    ids: Vec<u32>,
}

impl<const D: usize> Ours<D> {
    pub fn build(boxes: &[Aabb<D>]) -> Self {
        let mut world = World::new(Config::default()).expect("world");
        let handles = world.extend(boxes, Kind::Static).expect("extend");
        world.update().expect("update");
        let mut ids = vec![u32::MAX; handles.iter().map(|h| h.index() as usize + 1).max().unwrap_or(0)];
        for (i, h) in handles.iter().enumerate() {
            ids[h.index() as usize] = i as u32;
        }
        Ours { world, ids }
    }
}

impl<const D: usize> Peer<D> for Ours<D> {
    type Id = Handle;

    fn name(&self) -> &'static str {
        "ours_single"
    }

    fn runs(&self, _: QKind) -> bool {
        true
    }

    fn region(&self, q: &Aabb<D>, out: &mut Vec<Handle>) {
        self.world.query_aabb(*q, QueryFilter::new(), out).expect("query_aabb");
    }

    fn point(&self, p: &[f32; D], out: &mut Vec<Handle>) {
        self.world.query_point(*p, QueryFilter::new(), out).expect("query_point");
    }

    fn ray_closest(&self, r: &Ray<D>) -> Option<(Handle, f32)> {
        self.world.cast_ray(r.origin, r.dir, r.max_t, QueryFilter::new()).expect("cast_ray")
    }

    fn ray_all(&self, r: &Ray<D>, out: &mut Vec<(Handle, f32)>) {
        let f = QueryFilter::new();
        self.world.cast_ray_all(r.origin, r.dir, r.max_t, usize::MAX, f, out).expect("cast_ray_all");
    }

    fn sphere(&self, s: &Sphere<D>, out: &mut Vec<Handle>) {
        self.world.query_sphere(s.center, s.radius, QueryFilter::new(), out).expect("query_sphere");
    }

    fn nearest(&self, p: &[f32; D], k: usize, out: &mut Vec<(Handle, f32)>) {
        self.world.nearest(*p, k, f32::INFINITY, QueryFilter::new(), out).expect("nearest");
    }

    fn sweep_closest(&self, s: &Sweep<D>) -> Option<(Handle, f32)> {
        self.world.cast_aabb(s.aabb, s.dir, s.max_t, QueryFilter::new()).expect("cast_aabb")
    }

    fn index(&self, h: Handle) -> u32 {
        self.ids[h.index() as usize]
    }
}

// ---------------------------------------------------------------------------------------
// parry2d and parry3d: the same API but for the vector types.

macro_rules! parry_peer {
    ($name:ident, $krate:ident, $dim:literal) => {
        /// parry's `Bvh` over the boxes (leaf `i` is box `i`), with the boxes kept for the
        /// leaf tests of `cast_ray`.
        pub struct $name {
            bvh: $krate::partitioning::Bvh,
            leaves: Vec<$krate::bounding_volume::Aabb>,
        }

        impl $name {
            fn vector<const D: usize>(a: &[f32; D]) -> $krate::math::Vector {
                assert_eq!(D, $dim, concat!(stringify!($krate), " is ", $dim, "D only"));
                $krate::math::Vector::from_slice(&a[..$dim])
            }

            fn aabb<const D: usize>(b: &Aabb<D>) -> $krate::bounding_volume::Aabb {
                $krate::bounding_volume::Aabb::new(Self::vector(&b.min), Self::vector(&b.max))
            }

            fn ray<const D: usize>(r: &Ray<D>) -> $krate::query::Ray {
                $krate::query::Ray::new(Self::vector(&r.origin), Self::vector(&r.dir))
            }

            pub fn build<const D: usize>(boxes: &[Aabb<D>], ploc: bool) -> Self {
                use $krate::partitioning::{Bvh, BvhBuildStrategy};
                let leaves: Vec<_> = boxes.iter().map(Self::aabb).collect();
                let strategy = if ploc { BvhBuildStrategy::Ploc } else { BvhBuildStrategy::Binned };
                $name { bvh: Bvh::from_leaves(strategy, &leaves), leaves }
            }
        }

        impl<const D: usize> Peer<D> for $name {
            type Id = u32;

            fn name(&self) -> &'static str {
                "parry"
            }

            fn runs(&self, kind: QKind) -> bool {
                kind != QKind::Nearest10
            }

            fn region(&self, q: &Aabb<D>, out: &mut Vec<u32>) {
                out.clear();
                out.extend(self.bvh.intersect_aabb(&Self::aabb(q)));
            }

            fn point(&self, p: &[f32; D], out: &mut Vec<u32>) {
                let v = Self::vector(p);
                out.clear();
                out.extend(self.bvh.intersect_aabb(&$krate::bounding_volume::Aabb::new(v, v)));
            }

            fn ray_closest(&self, r: &Ray<D>) -> Option<(u32, f32)> {
                use $krate::query::RayCast;
                let ray = Self::ray(r);
                self.bvh.cast_ray(&ray, r.max_t, |i, best| {
                    self.leaves[i as usize].cast_local_ray(&ray, best, true)
                })
            }

            fn ray_all(&self, r: &Ray<D>, out: &mut Vec<(u32, f32)>) {
                use $krate::partitioning::TraversalAction;
                use $krate::query::RayCast;
                let ray = Self::ray(r);
                out.clear();
                self.bvh.traverse(|node| match node.aabb().cast_local_ray(&ray, r.max_t, true) {
                    None => TraversalAction::Prune,
                    Some(t) => {
                        if let Some(i) = node.leaf_data() {
                            out.push((i, t));
                        }
                        TraversalAction::Continue
                    }
                });
            }

            /// The leaves whose boxes lie within the radius (`leaves`, pruning each node
            /// by its box's distance to the centre).
            fn sphere(&self, s: &Sphere<D>, out: &mut Vec<u32>) {
                use $krate::query::PointQuery;
                let (c, r) = (Self::vector(&s.center), s.radius);
                out.clear();
                out.extend(self.bvh.leaves(|node| node.aabb().distance_to_local_point(c, true) <= r));
            }

            /// `project_point` (its best-first search) with each leaf's box projected
            /// (solid): the nearest box; parry has no k-nearest query.
            fn nearest(&self, p: &[f32; D], k: usize, out: &mut Vec<(u32, f32)>) {
                use $krate::query::PointQuery;
                assert_eq!(k, 1, "parry's project_point finds the nearest only");
                let v = Self::vector(p);
                out.clear();
                out.extend(
                    self.bvh
                        .project_point(v, f32::MAX, |i, _| {
                            Some(self.leaves[i as usize].project_local_point(v, true))
                        })
                        .map(|(i, (d, _))| (i, d)),
                );
            }

            /// `find_best` as parry's own shape casts on composite shapes walk it: each
            /// node's box grown by the swept box's half extents, a ray from its centre.
            fn sweep_closest(&self, s: &Sweep<D>) -> Option<(u32, f32)> {
                use $krate::bounding_volume::Aabb as PAabb;
                use $krate::query::RayCast;
                let half = Self::vector(&std::array::from_fn::<f32, D, _>(|k| {
                    0.5 * (s.aabb.max[k] - s.aabb.min[k])
                }));
                let centre = Self::vector(&std::array::from_fn::<f32, D, _>(|k| {
                    0.5 * (s.aabb.min[k] + s.aabb.max[k])
                }));
                let ray = $krate::query::Ray::new(centre, Self::vector(&s.dir));
                let grown = |b: PAabb| PAabb::new(b.mins - half, b.maxs + half);
                self.bvh.find_best(
                    s.max_t,
                    |node, best| grown(node.aabb()).cast_local_ray(&ray, best, true).unwrap_or(f32::MAX),
                    |i, best| grown(self.leaves[i as usize]).cast_local_ray(&ray, best, true),
                )
            }

            fn index(&self, id: u32) -> u32 {
                id
            }
        }
    };
}

parry_peer!(Parry2, parry2d, 2);
parry_peer!(Parry3, parry3d, 3);

// ---------------------------------------------------------------------------------------
// geo-index and rstar: 2D only, regions and points.

/// geo-index's packed R-tree, Hilbert-sorted, node size 16 (its default); `search`
/// returns a new `Vec` a query, which replaces the output.
pub struct GeoIndex {
    tree: geo_index::rtree::RTree<f32>,
}

impl GeoIndex {
    pub fn build<const D: usize>(boxes: &[Aabb<D>]) -> Self {
        use geo_index::rtree::sort::HilbertSort;
        assert_eq!(D, 2, "geo-index is 2D only");
        let mut b = geo_index::rtree::RTreeBuilder::<f32>::new(boxes.len() as u32);
        for x in boxes {
            b.add(x.min[0], x.min[1], x.max[0], x.max[1]);
        }
        GeoIndex { tree: b.finish::<HilbertSort>() }
    }
}

impl<const D: usize> Peer<D> for GeoIndex {
    type Id = u32;

    fn name(&self) -> &'static str {
        "geo_index"
    }

    fn runs(&self, kind: QKind) -> bool {
        matches!(
            kind,
            QKind::RegionsSmall | QKind::RegionsLarge | QKind::Points | QKind::Nearest1 | QKind::Nearest10
        )
    }

    fn region(&self, q: &Aabb<D>, out: &mut Vec<u32>) {
        use geo_index::rtree::RTreeIndex;
        *out = self.tree.search(q.min[0], q.min[1], q.max[0], q.max[1]);
    }

    fn point(&self, p: &[f32; D], out: &mut Vec<u32>) {
        use geo_index::rtree::RTreeIndex;
        *out = self.tree.search(p[0], p[1], p[0], p[1]);
    }

    /// `neighbors` (its best-first k-nearest search; ids only, in a new `Vec`).
    fn nearest(&self, p: &[f32; D], k: usize, out: &mut Vec<(u32, f32)>) {
        use geo_index::rtree::RTreeIndex;
        out.clear();
        out.extend(self.tree.neighbors(p[0], p[1], Some(k), None).into_iter().map(|i| (i, f32::NAN)));
    }

    fn index(&self, id: u32) -> u32 {
        id
    }
}

type RstarBox = rstar::primitives::GeomWithData<rstar::primitives::Rectangle<[f32; 2]>, u32>;

/// rstar's R*-tree, bulk loaded, of rectangles tagged with their index.
pub struct Rstar {
    tree: rstar::RTree<RstarBox>,
}

impl Rstar {
    pub fn build<const D: usize>(boxes: &[Aabb<D>]) -> Self {
        use rstar::primitives::{GeomWithData, Rectangle};
        assert_eq!(D, 2, "rstar is used in 2D only");
        let items: Vec<RstarBox> = boxes
            .iter()
            .enumerate()
            .map(|(i, b)| {
                GeomWithData::new(
                    Rectangle::from_corners([b.min[0], b.min[1]], [b.max[0], b.max[1]]),
                    i as u32,
                )
            })
            .collect();
        Rstar { tree: rstar::RTree::bulk_load(items) }
    }
}

impl<const D: usize> Peer<D> for Rstar {
    type Id = u32;

    fn name(&self) -> &'static str {
        "rstar"
    }

    fn runs(&self, kind: QKind) -> bool {
        !matches!(kind, QKind::RaysClosest | QKind::RaysAll | QKind::Sweeps)
    }

    fn region(&self, q: &Aabb<D>, out: &mut Vec<u32>) {
        let env = rstar::AABB::from_corners([q.min[0], q.min[1]], [q.max[0], q.max[1]]);
        out.clear();
        out.extend(self.tree.locate_in_envelope_intersecting(env).map(|g| g.data));
    }

    fn point(&self, p: &[f32; D], out: &mut Vec<u32>) {
        out.clear();
        out.extend(self.tree.locate_all_at_point([p[0], p[1]]).map(|g| g.data));
    }

    /// `locate_within_distance` (squared radius; a rectangle's distance is 0 inside).
    fn sphere(&self, s: &Sphere<D>, out: &mut Vec<u32>) {
        out.clear();
        let c = [s.center[0], s.center[1]];
        out.extend(self.tree.locate_within_distance(c, s.radius * s.radius).map(|g| g.data));
    }

    /// `nearest_neighbor` for one, `nearest_neighbor_iter` for more (ids only).
    fn nearest(&self, p: &[f32; D], k: usize, out: &mut Vec<(u32, f32)>) {
        out.clear();
        if k == 1 {
            out.extend(self.tree.nearest_neighbor([p[0], p[1]]).map(|g| (g.data, f32::NAN)));
        } else {
            out.extend(self.tree.nearest_neighbor_iter([p[0], p[1]]).take(k).map(|g| (g.data, f32::NAN)));
        }
    }

    fn index(&self, id: u32) -> u32 {
        id
    }
}
