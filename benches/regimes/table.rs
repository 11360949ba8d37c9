//! What `benches/regimes.rs` prints: a regime's lock-step frames (each side's time per
//! frame, the world's `WorldStats` summed) as a line, and every regime as a table.

use broadphase::World;
use std::time::Duration;

/// A regime's lock-step frames: each side's time per frame, and the world's stats summed.
#[derive(Default)]
pub struct Row {
    pub name: String,
    pub world: Vec<Duration>,
    pub one_shot: Vec<Duration>,
    pub rapier: Vec<Duration>,
    /// Sums over the frames: moved, added, removed, pairs; search and update time.
    counts: [usize; 4],
    t_search: Duration,
    t_update: Duration,
    /// Sums of the stage times: upkeep, events, apply, serial.
    stages: [Duration; 4],
    object_bytes: usize,
}

impl Row {
    pub fn new(name: &str) -> Self {
        Row { name: name.to_string(), ..Row::default() }
    }

    pub fn add_stats<const D: usize>(&mut self, w: &World<D>) {
        let st = w.stats();
        for (sum, v) in self.counts.iter_mut().zip([st.moved, st.added, st.removed, st.pairs]) {
            *sum += v;
        }
        self.t_search += st.t_search;
        self.t_update += st.t_update;
        for (sum, v) in self.stages.iter_mut().zip([st.t_upkeep, st.t_events, st.t_apply, st.t_serial]) {
            *sum += v;
        }
        self.object_bytes = st.object_bytes;
    }

    pub fn frames(&self) -> usize {
        self.world.len()
    }

    /// A column's median in ms, or `None` when the side did not run.
    fn median(times: &[Duration]) -> Option<f64> {
        let mut v: Vec<f64> = times.iter().map(|t| t.as_secs_f64() * 1e3).collect();
        v.sort_by(f64::total_cmp);
        (!v.is_empty()).then(|| v[v.len() / 2])
    }

    /// A column's mean in ms, or `None` when the side did not run.
    fn mean(times: &[Duration]) -> Option<f64> {
        let sum: f64 = times.iter().map(|t| t.as_secs_f64() * 1e3).sum();
        (!times.is_empty()).then(|| sum / times.len() as f64)
    }

    pub fn line(&self, dim: &str, objects: usize) -> String {
        let (w, o) = (Self::median(&self.world), Self::median(&self.one_shot));
        let nan = |x: Option<f64>| x.unwrap_or(f64::NAN);
        let f = self.frames().max(1);
        let avg = |i: usize| self.counts[i] as f64 / f as f64;
        let ms = |t: Duration| t.as_secs_f64() * 1e3 / f as f64;
        let mut s = format!(
            "regimes {dim} {}: {} frames, median per frame: world {:.3} ms (mean {:.3}), one-shot {:.3} ms \
             (mean {:.3}), world/one-shot {:.3}",
            self.name,
            self.frames(),
            nan(w),
            nan(Self::mean(&self.world)),
            nan(o),
            nan(Self::mean(&self.one_shot)),
            nan(w) / nan(o)
        );
        if let Some(r) = Self::median(&self.rapier) {
            s += &format!(
                ", rapier {r:.3} ms (mean {:.3}), world/rapier {:.3}",
                nan(Self::mean(&self.rapier)),
                nan(w) / r
            );
        }
        s += &format!(
            "\nregimes {dim} {}: WorldStats averaged: moved {:.0}, added {:.1}, removed {:.1}, pairs {:.0}, t_search \
             {:.3} ms, t_update {:.3} ms; object_bytes {:.1} per object (last)",
            self.name,
            avg(0),
            avg(1),
            avg(2),
            avg(3),
            ms(self.t_search),
            ms(self.t_update),
            self.object_bytes as f64 / objects.max(1) as f64
        );
        s
    }
}

pub fn table(rows: &[Row], header: &str) {
    println!("\n{header}\n");
    println!(
        "| regime | frames | world ms | world mean | one-shot ms | world/one-shot | rapier ms | world/rapier | \
         moved | added | removed | pairs | t_search mean |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let opt = |x: Option<f64>, p: usize| x.map_or("-".to_string(), |x| format!("{x:.p$}"));
    for r in rows {
        let (w, o, ra) = (Row::median(&r.world), Row::median(&r.one_shot), Row::median(&r.rapier));
        let f = r.frames().max(1) as f64;
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.1} | {:.1} | {:.0} | {:.3} |",
            r.name,
            r.frames(),
            opt(w, 3),
            opt(Row::mean(&r.world), 3),
            opt(o, 3),
            opt(w.zip(o).map(|(w, o)| w / o), 3),
            opt(ra, 3),
            opt(w.zip(ra).map(|(w, r)| w / r), 3),
            r.counts[0] as f64 / f,
            r.counts[1] as f64 / f,
            r.counts[2] as f64 / f,
            r.counts[3] as f64 / f,
            r.t_search.as_secs_f64() * 1e3 / f
        );
    }
    println!();
    println!(
        "The world's stages, means per frame in ms (`WorldStats`; walks: the search less the upkeep):\n"
    );
    println!("| regime | update | upkeep | walks | events | apply | serial | serial share |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let f = r.frames().max(1) as f64;
        let ms = |t: Duration| t.as_secs_f64() * 1e3 / f;
        let [upkeep, events, apply, serial] = r.stages;
        println!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2} |",
            r.name,
            ms(r.t_update),
            ms(upkeep),
            ms(r.t_search.saturating_sub(upkeep)),
            ms(events),
            ms(apply),
            ms(serial),
            serial.as_secs_f64() / r.t_update.as_secs_f64().max(1e-12)
        );
    }
    println!();
}
