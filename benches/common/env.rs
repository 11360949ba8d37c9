//! The benches' environment knobs: a variable read as text, a number, seconds or a comma
//! separated list, with a default where it is unset or blank. A value that does not parse
//! stops the bench with the variable's name (a typo must not measure the default).
#![allow(dead_code)]

use std::time::Duration;

/// `name`'s value, trimmed, or `default` where it is unset or blank.
pub fn env_str(name: &str, default: &str) -> String {
    let v = std::env::var(name).unwrap_or_default();
    if v.trim().is_empty() {
        default.to_string()
    } else {
        v.trim().to_string()
    }
}

/// A whole number (`_` allowed as a separator).
pub fn env_num(name: &str, default: usize) -> usize {
    let v = env_str(name, &default.to_string());
    v.replace('_', "").parse().unwrap_or_else(|_| panic!("{name}={v}: not a whole number"))
}

/// A number.
pub fn env_f64(name: &str, default: f64) -> f64 {
    let v = env_str(name, &default.to_string());
    v.replace('_', "").parse().unwrap_or_else(|_| panic!("{name}={v}: not a number"))
}

/// Seconds.
pub fn env_secs(name: &str, default: f64) -> Duration {
    Duration::from_secs_f64(env_f64(name, default))
}

/// A comma separated list of words.
pub fn env_words(name: &str, default: &str) -> Vec<String> {
    env_str(name, default).split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
}

/// A comma separated list of whole numbers.
pub fn env_nums(name: &str, default: &str) -> Vec<usize> {
    env_words(name, default)
        .iter()
        .map(|s| s.replace('_', "").parse().unwrap_or_else(|_| panic!("{name}: {s:?} is not a number")))
        .collect()
}
