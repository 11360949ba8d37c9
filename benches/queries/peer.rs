//! The sides of `benches/queries.rs`: ours (one `World` query a call) and the peers
//! (parry2d / parry3d's `Bvh`, geo-index's packed Hilbert R-tree, rstar's R*-tree), each
//! behind [`Peer`], and the loops that run a set of queries through one of them.
//!
//! Every side answers with the indices of the boxes it was built from (ours with handles,
//! mapped to indices only for the check). The peers are generic in `D` so that one list of
//! them serves both dimensions; each is only ever built in its own dimension.

use broadphase::{Aabb, Config, Handle, Kind, Ray, Select, World};
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
}

impl QKind {
    pub const ALL: [QKind; 5] =
        [QKind::RegionsSmall, QKind::RegionsLarge, QKind::Points, QKind::RaysClosest, QKind::RaysAll];

    pub fn name(self) -> &'static str {
        match self {
            QKind::RegionsSmall => "regions_small",
            QKind::RegionsLarge => "regions_large",
            QKind::Points => "points",
            QKind::RaysClosest => "rays_closest",
            QKind::RaysAll => "rays_all",
        }
    }

    pub fn is_ray(self) -> bool {
        matches!(self, QKind::RaysClosest | QKind::RaysAll)
    }
}

/// The queries of one scene.
pub struct Queries<const D: usize> {
    pub small: Vec<Aabb<D>>,
    pub large: Vec<Aabb<D>>,
    pub points: Vec<[f32; D]>,
    pub rays: Vec<Ray<D>>,
}

impl<const D: usize> Queries<D> {
    pub fn count(&self, kind: QKind) -> usize {
        match kind {
            QKind::RegionsSmall => self.small.len(),
            QKind::RegionsLarge => self.large.len(),
            QKind::Points => self.points.len(),
            QKind::RaysClosest | QKind::RaysAll => self.rays.len(),
        }
    }
}

/// What the check compares: per query, the sorted box indices, or the closest hit.
#[derive(Debug, PartialEq)]
pub enum Answers {
    Sets(Vec<Vec<u32>>),
    Closest(Vec<Option<(u32, f32)>>),
}

/// One query a call, as each library offers it.
pub trait Peer<const D: usize>: Sync {
    /// What a hit names (ours: a handle; the peers: the box's index).
    type Id: Copy + Send + Sync;
    fn name(&self) -> &'static str;
    fn has_rays(&self) -> bool;
    /// The boxes overlapping `q` (closed), into `out` (replaced).
    fn region(&self, q: &Aabb<D>, out: &mut Vec<Self::Id>);
    /// The boxes holding `p` (closed), into `out` (replaced).
    fn point(&self, p: &[f32; D], out: &mut Vec<Self::Id>);
    /// The closest box the ray enters at `0 <= t <= max_t`, with its `t`.
    fn ray_closest(&self, r: &Ray<D>) -> Option<(Self::Id, f32)>;
    /// Every box the ray enters, with its `t`, into `out` (replaced).
    fn ray_all(&self, r: &Ray<D>, out: &mut Vec<(Self::Id, f32)>);
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
    /// Each query's answer, for the check.
    fn answers(&self, qs: &Queries<D>, kind: QKind) -> Answers;
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
        !kind.is_ray() || self.has_rays()
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
        }
    }

    fn answers(&self, qs: &Queries<D>, kind: QKind) -> Answers {
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

    fn has_rays(&self) -> bool {
        true
    }

    fn region(&self, q: &Aabb<D>, out: &mut Vec<Handle>) {
        self.world.query_aabb(*q, Select::All, None, out).expect("query_aabb");
    }

    fn point(&self, p: &[f32; D], out: &mut Vec<Handle>) {
        self.world.query_point(*p, Select::All, None, out).expect("query_point");
    }

    fn ray_closest(&self, r: &Ray<D>) -> Option<(Handle, f32)> {
        self.world.cast_ray(r.origin, r.dir, r.max_t, Select::All, None).expect("cast_ray")
    }

    fn ray_all(&self, r: &Ray<D>, out: &mut Vec<(Handle, f32)>) {
        self.world.cast_ray_all(r.origin, r.dir, r.max_t, Select::All, None, out).expect("cast_ray_all");
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

            fn has_rays(&self) -> bool {
                true
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

    fn has_rays(&self) -> bool {
        false
    }

    fn region(&self, q: &Aabb<D>, out: &mut Vec<u32>) {
        use geo_index::rtree::RTreeIndex;
        *out = self.tree.search(q.min[0], q.min[1], q.max[0], q.max[1]);
    }

    fn point(&self, p: &[f32; D], out: &mut Vec<u32>) {
        use geo_index::rtree::RTreeIndex;
        *out = self.tree.search(p[0], p[1], p[0], p[1]);
    }

    fn ray_closest(&self, _: &Ray<D>) -> Option<(u32, f32)> {
        unreachable!("geo-index has no ray casts")
    }

    fn ray_all(&self, _: &Ray<D>, _: &mut Vec<(u32, f32)>) {
        unreachable!("geo-index has no ray casts")
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

    fn has_rays(&self) -> bool {
        false
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

    fn ray_closest(&self, _: &Ray<D>) -> Option<(u32, f32)> {
        unreachable!("no ray casts through rstar")
    }

    fn ray_all(&self, _: &Ray<D>, _: &mut Vec<(u32, f32)>) {
        unreachable!("no ray casts through rstar")
    }

    fn index(&self, id: u32) -> u32 {
        id
    }
}
