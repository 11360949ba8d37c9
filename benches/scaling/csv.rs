//! The scaling bench's CSV: one file a machine, `docs/bench/<machine>.csv`, a row per
//! dimension, scene, `n`, method or peer and thread count. Input: the rows of a run and the
//! file as it stands. Output: the merged file, a run's rows replacing those of the same key
//! and leaving the others, sorted, with every speedup recomputed from the rows at 1 thread.
//! Plain text, comma separated, no quoting (no field holds a comma: scene names are
//! words, numbers and colons).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub const HEADER: &str = "machine,cores,dims,scene,n,method_or_peer,threads,median_s,boxes_per_s,\
                          speedup_vs_1_thread,pairs,commit,ran";

/// One measurement.
#[derive(Clone, Debug)]
pub struct Row {
    pub machine: String,
    /// The cores the machine reported when the row was measured.
    pub cores: usize,
    pub dims: usize,
    pub scene: String,
    /// The size asked of the scene generator (`mixed` adds 1000 boxes to it).
    pub n: usize,
    /// A method's name (`benches/common/methods.rs`) or a peer's.
    pub who: String,
    pub threads: usize,
    /// The median time of one call, seconds.
    pub median_s: f64,
    /// Boxes the scene holds over `median_s`.
    pub boxes_per_s: f64,
    /// The median at 1 thread over this one; `None` where no row at 1 thread exists.
    pub speedup: Option<f64>,
    pub pairs: u64,
    /// The short commit, or empty where it was unknown.
    pub commit: String,
    /// The method that found the pairs (`Stats::method`): for `auto`, the one it chose;
    /// empty for a peer.
    pub ran: String,
}

type Key = (usize, String, usize, String, usize);

impl Row {
    fn key(&self) -> Key {
        (self.dims, self.scene.clone(), self.n, self.who.clone(), self.threads)
    }

    fn line(&self) -> String {
        format!(
            "{},{},{},{},{},{},{},{:.4e},{:.0},{},{},{},{}",
            self.machine,
            self.cores,
            self.dims,
            self.scene,
            self.n,
            self.who,
            self.threads,
            self.median_s,
            self.boxes_per_s,
            self.speedup.map(|s| format!("{s:.3}")).unwrap_or_default(),
            self.pairs,
            self.commit,
            self.ran
        )
    }

    fn parse(line: &str) -> Result<Row, String> {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 13 {
            return Err(format!("{} fields, not 13", f.len()));
        }
        fn num<T: std::str::FromStr>(s: &str, what: &str) -> Result<T, String> {
            s.trim().parse().map_err(|_| format!("{what}: {s:?} is not a number"))
        }
        Ok(Row {
            machine: f[0].to_string(),
            cores: num(f[1], "cores")?,
            dims: num(f[2], "dims")?,
            scene: f[3].to_string(),
            n: num(f[4], "n")?,
            who: f[5].to_string(),
            threads: num(f[6], "threads")?,
            median_s: num(f[7], "median_s")?,
            boxes_per_s: num(f[8], "boxes_per_s")?,
            speedup: if f[9].trim().is_empty() { None } else { Some(num(f[9], "speedup")?) },
            pairs: num(f[10], "pairs")?,
            commit: f[11].trim().to_string(),
            ran: f[12].trim().to_string(),
        })
    }
}

/// The rows of the CSV at `path`; none where it does not exist. Stops on a malformed line.
pub fn read(path: &Path) -> Vec<Row> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    match lines.next() {
        Some((_, h)) if h.trim() == HEADER => {}
        Some((_, h)) => panic!("{}: header {h:?}, expected {HEADER:?}", path.display()),
        None => return Vec::new(),
    }
    lines
        .map(|(i, l)| Row::parse(l).unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1)))
        .collect()
}

/// Every CSV under `dir`, by machine name (the file's stem), in name order.
pub fn read_all(dir: &Path) -> Vec<(String, Vec<Row>)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    paths.retain(|p| p.extension().is_some_and(|e| e == "csv"));
    paths.sort();
    paths
        .into_iter()
        .map(|p| (p.file_stem().unwrap().to_string_lossy().into_owned(), read(&p)))
        .filter(|(_, rows)| !rows.is_empty())
        .collect()
}

/// Merges `new` into the CSV at `path` (created with its folder where missing): a new row
/// replaces the old row of the same dimension, scene, `n`, method or peer and thread count.
/// Returns the number of rows written.
pub fn merge_into(path: &Path, new: Vec<Row>) -> usize {
    let mut rows = read(path);
    let keys: std::collections::HashSet<Key> = new.iter().map(Row::key).collect();
    rows.retain(|r| !keys.contains(&r.key()));
    rows.extend(new);
    sort(&mut rows);
    speedups(&mut rows);
    let mut text = String::from(HEADER);
    text.push('\n');
    for r in &rows {
        text += &r.line();
        text.push('\n');
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create docs/bench");
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    rows.len()
}

/// A name's place in `list`, names not in it after (then by name).
fn rank<'a>(list: impl IntoIterator<Item = &'a str>, name: &str) -> (usize, String) {
    (list.into_iter().position(|s| s == name).unwrap_or(usize::MAX), name.to_string())
}

/// The order of the scenes in the bench's default list, then by name.
pub fn scene_rank(scene: &str) -> (usize, String) {
    rank(crate::SCENES.split(','), scene)
}

/// Our methods in their table's order, then the peers in theirs, then by name.
pub fn who_rank(who: &str) -> (usize, String) {
    let ours = crate::methods::METHODS.iter().map(|m| m.0);
    rank(ours.chain(crate::peers::Peer::ALL.iter().map(|p| p.name())), who)
}

/// Sorts by dimension, scene, `n`, method or peer, threads.
pub fn sort(rows: &mut [Row]) {
    rows.sort_by_cached_key(|r| (r.dims, scene_rank(&r.scene), r.n, who_rank(&r.who), r.threads));
}

/// Every row's speedup: the median at 1 thread of the same dimension, scene, `n` and method
/// or peer over its own.
fn speedups(rows: &mut [Row]) {
    let base: HashMap<Key, f64> = rows
        .iter()
        .filter(|r| r.threads == 1)
        .map(|r| ((r.dims, r.scene.clone(), r.n, r.who.clone(), 0), r.median_s))
        .collect();
    for r in rows {
        r.speedup = base.get(&(r.dims, r.scene.clone(), r.n, r.who.clone(), 0)).map(|b| b / r.median_s);
    }
}

/// `given`, else the host name, else `unnamed`; kept to letters, digits, `.`, `_` and `-`
/// (it names files).
pub fn machine_name(given: &str) -> String {
    let host = || {
        std::fs::read_to_string("/etc/hostname")
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .or_else(|| {
                let out = std::process::Command::new("hostname").output().ok()?;
                out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
            })
            .unwrap_or_default()
    };
    let name = if given.is_empty() { host() } else { given.to_string() };
    let name: String = name
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '-' })
        .collect();
    if name.is_empty() {
        "unnamed".into()
    } else {
        name
    }
}

/// `given`, else `git rev-parse --short HEAD` in the repository, else empty.
pub fn commit(given: &str) -> String {
    if !given.is_empty() {
        return given.to_string();
    }
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(crate::root())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}
