//! rapier's broad phase (`BroadPhaseBvh`) as the peer of `World`: one macro, instantiated
//! for rapier2d and rapier3d, whose APIs are the same but for the vector types.
//!
//! Set-up, as a physics engine drives it:
//! - static boxes are parentless cuboid colliders (rapier treats them as fixed), dynamic
//!   boxes are cuboid colliders each on its own dynamic body (identity offset, so the
//!   collider sits at its body's position); every collider's `user_data` is its object id;
//! - `IntegrationParameters` with prediction distance 0; the contact skin is 0 by default.
//!   rapier fattens its tree leaves by a change-detection skin of 0.04 length units (the
//!   unit is 1 by default): a move within it leaves the tree as it is, and a pair is
//!   dropped only once the fat leaves part, so its pairs are a superset of the overlapping
//!   boxes'. With `exact`, the length unit is 2.5e-29, a skin of 1e-30, and its pairs are
//!   exactly the overlapping closed boxes with a dynamic member, as ours are.
//! - The build inserts the bodies and colliders and runs the first `BroadPhaseBvh::update`
//!   with every collider as modified.
//! - A frame: moved colliders get `set_translation` through `ColliderSet::get_mut` (the
//!   pipeline would copy the body's pose into the collider: the same writes); re-inserted
//!   ones are `ColliderSet::remove`d and a new collider is inserted on the same body, moved
//!   first to where the box is; then `update` with the moved and new handles as modified
//!   and `take_removed()` as removed.
//!
//! Change flags: a new collider has every change flag set and only a pipeline step clears
//! them (there is no public way to clear them otherwise). Left set, a moved collider that
//! was (re-)inserted is re-inserted into the tree as if re-parented, with a full refit,
//! every time it moves. So after the build and after every frame, `settle` runs, untimed,
//! one `CollisionPipeline::step` on a throwaway broad phase and narrow phase: it clears the
//! flags of every collider modified since, as the step of a physics engine would, and
//! touches nothing the measured broad phase holds.

use crate::{Frame, Scene};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// What the bench asks of a peer.
pub trait Peer<const D: usize>: Sized + Send {
    /// What the timed build consumes, made untimed (colliders, bodies).
    type Parts: Send;
    fn parts(scene: &Scene<D>, exact: bool, track: bool) -> Self::Parts;
    /// Timed: the sets filled and the broad phase's first update.
    fn build(parts: Self::Parts) -> Self;
    /// Untimed, after the build and after each frame: what a physics step would do
    /// between two broad-phase updates (clear the change flags).
    fn settle(&mut self);
    /// Untimed: the frame as the peer's calls take it.
    fn prepare(&mut self, frame: &Frame<D>, scene: &Scene<D>);
    /// Timed: the calls and the broad-phase update; the number of events.
    fn apply(&mut self) -> usize;
    /// Timed: an update with nothing changed.
    fn idle(&mut self) -> usize;
    /// The pairs (object ids, sorted), followed through the events when built with `track`.
    fn pairs(&self) -> Vec<[u32; 2]>;
    /// Pairs after the build (its `AddPair` events), and heap bytes held by the whole
    /// world (sets and broad phase) and by the broad phase alone after the build.
    fn report(&self) -> (usize, isize, isize);
}

/// One frame on a peer: prepare and settle untimed, the rest timed.
pub fn peer_frame<const D: usize, P: Peer<D>>(p: &mut P, frame: &Frame<D>, scene: &Scene<D>) -> Duration {
    p.prepare(frame, scene);
    let t = Instant::now();
    black_box(p.apply());
    let dt = t.elapsed();
    p.settle();
    dt
}

macro_rules! rapier_peer {
    ($module:ident, $krate:ident, $d:literal) => {
        pub mod $module {
            use super::Peer;
            use crate::{live_bytes, Frame, Scene};
            use std::collections::HashSet;
            use $krate::prelude::*;

            fn vector(a: [f32; $d]) -> Vector {
                Vector::from_array(a)
            }

            /// A cuboid collider with half sides `h`, tagged with its object id.
            fn collider(h: [f32; $d], id: usize) -> ColliderBuilder {
                ColliderBuilder::new(SharedShape::new(Cuboid::new(vector(h)))).user_data(id as u128)
            }

            pub struct Parts {
                params: IntegrationParameters,
                statics: Vec<Collider>,
                dynamics: Vec<(RigidBody, Collider)>,
                track: bool,
                live_before: isize,
            }

            pub struct Rapier {
                params: IntegrationParameters,
                bodies: RigidBodySet,
                colliders: ColliderSet,
                islands: IslandManager,
                soft_bodies: SoftBodySet,
                bp: BroadPhaseBvh,
                /// By dynamic box: its collider and its body.
                handles: Vec<ColliderHandle>,
                body_of: Vec<RigidBodyHandle>,
                n_static: usize,
                events: Vec<BroadPhasePairEvent>,
                modified: Vec<ColliderHandle>,
                /// The prepared frame.
                moves: Vec<(ColliderHandle, Vector)>,
                fresh: Vec<(usize, Vector, Collider)>,
                reinserted: Vec<u32>,
                /// The pair set, followed through the events (only when tracking).
                pairs: Option<HashSet<[u32; 2]>>,
                built_pairs: usize,
                bytes: isize,
                bp_bytes: isize,
            }

            impl Rapier {
                fn id(&self, h: ColliderHandle) -> u32 {
                    self.colliders[h].user_data as u32
                }

                /// Brings the tracked pair set up to date with the last update's events.
                fn track(&mut self) {
                    let Some(mut pairs) = self.pairs.take() else { return };
                    // Pairs of removed colliders go without an event.
                    if !self.reinserted.is_empty() {
                        let gone: HashSet<u32> = self.reinserted.iter().copied().collect();
                        pairs.retain(|p| !gone.contains(&p[0]) && !gone.contains(&p[1]));
                    }
                    for e in &self.events {
                        let (p, add) = match e {
                            BroadPhasePairEvent::AddPair(p) => (p, true),
                            BroadPhasePairEvent::DeletePair(p) => (p, false),
                        };
                        let (a, b) = (self.id(p.collider1), self.id(p.collider2));
                        let key = [a.min(b), a.max(b)];
                        if add {
                            pairs.insert(key);
                        } else {
                            pairs.remove(&key);
                        }
                    }
                    self.pairs = Some(pairs);
                }
            }

            impl Peer<$d> for Rapier {
                type Parts = Parts;

                fn parts(scene: &Scene<$d>, exact: bool, track: bool) -> Parts {
                    let live_before = live_bytes();
                    let mut params = IntegrationParameters::default();
                    params.normalized_prediction_distance = 0.0;
                    if exact {
                        // Skin 0.04 length units = 1e-30: not 0, since parry's parallel
                        // bulk leaf update flags no change for a margin of 0 (the moved
                        // leaves' new pairs would go unseen), and small enough that no
                        // pair of the scenes' boxes is added by it.
                        params.length_unit = 2.5e-29;
                    }
                    let statics = scene
                        .statics
                        .iter()
                        .enumerate()
                        .map(|(id, &(c, h))| collider(h, id).translation(vector(c)).build())
                        .collect();
                    let s = scene.statics.len();
                    let dynamics = scene
                        .centres
                        .iter()
                        .zip(&scene.halves)
                        .enumerate()
                        .map(|(i, (&c, &h))| {
                            (
                                RigidBodyBuilder::dynamic().translation(vector(c)).build(),
                                collider(h, s + i).build(),
                            )
                        })
                        .collect();
                    Parts { params, statics, dynamics, track, live_before }
                }

                fn build(parts: Parts) -> Self {
                    let Parts { params, statics, dynamics, track, live_before } = parts;
                    let n_static = statics.len();
                    let mut bodies = RigidBodySet::new();
                    let mut colliders = ColliderSet::with_capacity(n_static + dynamics.len());
                    let mut all = Vec::with_capacity(n_static + dynamics.len());
                    all.extend(statics.into_iter().map(|c| colliders.insert(c)));
                    let (mut handles, mut body_of) = (Vec::new(), Vec::new());
                    for (rb, co) in dynamics {
                        let b = bodies.insert(rb);
                        let h = colliders.insert_with_parent(co, b, &mut bodies);
                        all.push(h);
                        handles.push(h);
                        body_of.push(b);
                    }
                    let mut bp = BroadPhaseBvh::new();
                    let mut events = Vec::new();
                    let bp_before = live_bytes();
                    bp.update(&params, &colliders, &bodies, &all, &[], &mut events);
                    let events_bytes =
                        (events.capacity() * std::mem::size_of::<BroadPhasePairEvent>()) as isize;
                    let bp_bytes = live_bytes() - bp_before - events_bytes;
                    let all_bytes = (all.capacity() * std::mem::size_of::<ColliderHandle>()) as isize;
                    let bytes = live_bytes() - live_before - events_bytes - all_bytes;
                    let mut r = Rapier {
                        params,
                        bodies,
                        colliders,
                        islands: IslandManager::new(),
                        soft_bodies: SoftBodySet::new(),
                        bp,
                        handles,
                        body_of,
                        n_static,
                        built_pairs: events.len(),
                        events,
                        modified: Vec::new(),
                        moves: Vec::new(),
                        fresh: Vec::new(),
                        reinserted: Vec::new(),
                        pairs: track.then(HashSet::new),
                        bytes,
                        bp_bytes,
                    };
                    r.track();
                    r
                }

                fn settle(&mut self) {
                    self.track();
                    self.reinserted.clear();
                    let (mut bp, mut np) = (BroadPhaseBvh::new(), NarrowPhase::new());
                    CollisionPipeline::new().step(
                        0.0,
                        &mut self.islands,
                        &mut bp,
                        &mut np,
                        &mut self.bodies,
                        &mut self.colliders,
                        &(),
                        &(),
                    );
                }

                fn prepare(&mut self, frame: &Frame<$d>, scene: &Scene<$d>) {
                    self.moves.clear();
                    self.moves
                        .extend(frame.moves.iter().map(|&(i, c)| (self.handles[i as usize], vector(c))));
                    self.fresh.clear();
                    self.reinserted.clear();
                    for &(i, c) in &frame.reinserts {
                        let i = i as usize;
                        self.fresh.push((i, vector(c), collider(scene.halves[i], self.n_static + i).build()));
                        self.reinserted.push((self.n_static + i) as u32);
                    }
                }

                fn apply(&mut self) -> usize {
                    self.modified.clear();
                    self.events.clear();
                    for &(h, v) in &self.moves {
                        if let Some(co) = self.colliders.get_mut(h) {
                            co.set_translation(v);
                        }
                        self.modified.push(h);
                    }
                    for (i, v, co) in self.fresh.drain(..) {
                        let b = self.body_of[i];
                        self.colliders.remove(
                            self.handles[i],
                            &mut self.islands,
                            &mut self.bodies,
                            &mut self.soft_bodies,
                            false,
                        );
                        if let Some(rb) = self.bodies.get_mut(b) {
                            rb.set_translation(v, false);
                        }
                        self.handles[i] = self.colliders.insert_with_parent(co, b, &mut self.bodies);
                        self.modified.push(self.handles[i]);
                    }
                    let removed = self.colliders.take_removed();
                    self.bp.update(
                        &self.params,
                        &self.colliders,
                        &self.bodies,
                        &self.modified,
                        &removed,
                        &mut self.events,
                    );
                    self.events.len()
                }

                fn idle(&mut self) -> usize {
                    self.events.clear();
                    self.bp.update(&self.params, &self.colliders, &self.bodies, &[], &[], &mut self.events);
                    self.events.len()
                }

                fn pairs(&self) -> Vec<[u32; 2]> {
                    let mut v: Vec<[u32; 2]> = self.pairs.iter().flatten().copied().collect();
                    v.sort_unstable();
                    v
                }

                fn report(&self) -> (usize, isize, isize) {
                    (self.built_pairs, self.bytes, self.bp_bytes)
                }
            }
        }
    };
}

rapier_peer!(d2, rapier2d, 2);
rapier_peer!(d3, rapier3d, 3);

pub use d2::Rapier as Rapier2;
pub use d3::Rapier as Rapier3;
