//! Our methods by name (`Method::name`), for the benches' `BP_METHODS`, with the largest
//! `n` at which a bench times each (the quadratic reference only on small scenes).
#![allow(dead_code)]

use broadphase::Method;

/// Every `Config::method` the benches run by name: its name, the method, and the largest
/// number of boxes a bench times it at, in `Method::ALL`'s order.
pub const METHODS: [(&str, Method, usize); Method::ALL.len()] = {
    let mut out = [("", Method::Auto, 0); Method::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        let m = Method::ALL[i];
        let max_n = if matches!(m, Method::BruteForce) { 20_000 } else { usize::MAX };
        out[i] = (m.name(), m, max_n);
        i += 1;
    }
    out
};

/// The names in [`METHODS`], in order.
pub fn method_names() -> Vec<&'static str> {
    METHODS.iter().map(|m| m.0).collect()
}

/// The method called `name`; stops the bench on an unknown name.
pub fn method_by_name(name: &str) -> Method {
    method_entry(name).1
}

/// The largest `n` a bench times the method called `name` at.
pub fn method_max_n(name: &str) -> usize {
    method_entry(name).2
}

/// The line of [`METHODS`] called `name`; stops the bench on an unknown name.
pub fn method_entry(name: &str) -> (&'static str, Method, usize) {
    *METHODS
        .iter()
        .find(|m| m.0 == name)
        .unwrap_or_else(|| panic!("BP_METHODS: one of {:?}, not {name:?}", method_names()))
}
