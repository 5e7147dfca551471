//! Device overrides: `--config-set PATH=VALUE` and the `config_set` lists of
//! study files.
//!
//! An override replaces the value of one field of a device file, named by
//! its path as written there (`l2.slice.size_bytes`, `sm.count`,
//! `load_rule`), and the result goes through the same parser and the same
//! [`DeviceSpec::validate`] as the file itself. The replacement is made in
//! the file's text, so enum values are written as in the file
//! (`load_rule=Lines(bytes: 32)`) and an optional field the file leaves out
//! (`l2.partitions`) can be given.
//!
//! ```text
//!  device text ──locate path──▶ value span ──replace──▶ text' ──parse──▶ DeviceSpec ──validate
//! ```

use crate::diag::Diag;
use crate::spec::DeviceSpec;
use simt_core::ir::ron_options;

/// One device field's values, as given on the command line:
/// `PATH=VALUE`, `PATH=V1,V2,...` or `PATH=FROM..=TO` (integers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigSet {
    /// Field path, e.g. `l2.slice.size_bytes`.
    pub path: String,
    /// Values, as RON text, in order.
    pub values: Vec<String>,
}

/// Parses `PATH=VALUE`, `PATH=V1,V2,...` or `PATH=FROM..=TO`. Commas inside
/// brackets or strings do not split (`load_rule=Lines(bytes: 32)`).
pub fn parse_config_set(arg: &str) -> Result<ConfigSet, Diag> {
    let bad = |why: &str| {
        Diag::msg(format!(
            "--config-set {arg}: {why} (expected PATH=VALUE, PATH=V1,V2,... or PATH=FROM..=TO)"
        ))
    };
    let (path, val) = arg.split_once('=').ok_or_else(|| bad("no `=`"))?;
    let path = path.trim();
    if path.is_empty() {
        return Err(bad("empty path"));
    }
    if path
        .split('.')
        .any(|s| s.is_empty() || !s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return Err(bad(&format!(
            "`{path}` is not a field path (names joined by `.`, e.g. l2.slice.size_bytes)"
        )));
    }
    let val = val.trim();
    if let Some((a, b)) = val.split_once("..=") {
        let int = |t: &str| {
            t.trim().parse::<i64>().map_err(|_| {
                bad(&format!(
                    "`{}` is not an integer (ranges are of integers)",
                    t.trim()
                ))
            })
        };
        let (a, b) = (int(a)?, int(b)?);
        if b < a {
            return Err(bad(&format!("empty range {a}..={b}")));
        }
        if b as i128 - a as i128 > 10_000 {
            return Err(bad("more than 10000 values"));
        }
        return Ok(ConfigSet {
            path: path.to_string(),
            values: (a..=b).map(|v| v.to_string()).collect(),
        });
    }
    let values = split_top_level(val);
    if values.iter().any(|v| v.is_empty()) {
        return Err(bad("empty value"));
    }
    Ok(ConfigSet {
        path: path.to_string(),
        values,
    })
}

/// Splits at commas outside brackets and strings.
fn split_top_level(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut in_str, mut esc) = (0i32, false, false);
    let mut cur = String::new();
    for c in s.chars() {
        if in_str {
            cur.push(c);
            match (esc, c) {
                (true, _) => esc = false,
                (false, '\\') => esc = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur.trim().to_string());
    out
}

/// Every combination of the sets' values, the first set varying slowest.
pub fn combinations(sets: &[ConfigSet]) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for s in sets {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                s.values.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push((s.path.clone(), v.clone()));
                    p
                })
            })
            .collect();
    }
    out
}

/// A tiny RON scanner: enough to find a struct field's value in a file
/// without losing its comments or layout.
struct Scan<'a> {
    s: &'a [u8],
}

impl Scan<'_> {
    /// Skips whitespace and comments from `i`.
    fn skip(&self, mut i: usize) -> usize {
        let s = self.s;
        loop {
            while i < s.len() && s[i].is_ascii_whitespace() {
                i += 1;
            }
            if i >= s.len() {
                return s.len();
            }
            if s[i..].starts_with(b"//") {
                while i < s.len() && s[i] != b'\n' {
                    i += 1;
                }
            } else if s[i..].starts_with(b"/*") {
                let mut depth = 0;
                while i < s.len() {
                    if s[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if s[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            } else {
                return i;
            }
        }
    }

    fn ident(&self, i: usize) -> usize {
        let mut j = i;
        while j < self.s.len() && (self.s[j].is_ascii_alphanumeric() || self.s[j] == b'_') {
            j += 1;
        }
        j
    }

    /// The end of the value starting at `i` (exclusive): the next `,` or
    /// closing bracket at depth 0, trailing whitespace and comments excluded.
    fn value_end(&self, i: usize) -> usize {
        let s = self.s;
        let (mut j, mut depth, mut last) = (i, 0i32, i);
        while j < s.len() {
            let k = self.skip(j);
            if k != j {
                j = k;
                continue;
            }
            match s[j] {
                b'"' => {
                    j += 1;
                    while j < s.len() && s[j] != b'"' {
                        j += if s[j] == b'\\' { 2 } else { 1 };
                    }
                }
                b'\'' => {
                    j += 1;
                    while j < s.len() && s[j] != b'\'' {
                        j += if s[j] == b'\\' { 2 } else { 1 };
                    }
                }
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' if depth == 0 => return last,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => return last,
                _ => {}
            }
            j += 1;
            last = j;
        }
        last
    }

    /// If a struct starts at `i` (an optional name, or `Some(`, then `(`),
    /// the index just inside its `(`.
    fn struct_body(&self, i: usize) -> Option<usize> {
        let mut i = self.skip(i);
        let name_end = self.ident(i);
        let name = &self.s[i..name_end];
        i = self.skip(name_end);
        if self.s.get(i) != Some(&b'(') {
            return None;
        }
        if name == b"Some" {
            return self.struct_body(i + 1);
        }
        Some(i + 1)
    }

    /// The fields of the struct whose body starts at `body`: (name, span of
    /// the value).
    fn fields(&self, body: usize) -> Vec<(String, usize, usize)> {
        let mut out = Vec::new();
        let mut i = self.skip(body);
        while i < self.s.len() && self.s[i] != b')' {
            let name_end = self.ident(i);
            if name_end == i {
                break;
            }
            let name = String::from_utf8_lossy(&self.s[i..name_end]).into_owned();
            let colon = self.skip(name_end);
            if self.s.get(colon) != Some(&b':') {
                break;
            }
            let start = self.skip(colon + 1);
            let end = self.value_end(start);
            out.push((name, start, end));
            i = self.skip(end);
            if self.s.get(i) == Some(&b',') {
                i = self.skip(i + 1);
            }
        }
        out
    }
}

/// What an edit of the text does.
enum Edit {
    /// Replace bytes `start..end` with the value.
    Replace(usize, usize),
    /// Insert `name: value,` at this index (an optional field left out).
    Insert(usize, String),
}

const PROBE: &str = "__gpusim_no_such_field__";

/// The field names serde accepts in the struct whose body starts at `body`,
/// found by offering it a field that does not exist.
fn valid_fields(src: &str, body: usize) -> Vec<String> {
    let probed = format!("{}{PROBE}: 0, {}", &src[..body], &src[body..]);
    match ron_options().from_str::<DeviceSpec>(&probed) {
        Err(e) => match e.code {
            ron::error::Error::NoSuchStructField { expected, .. } => {
                expected.iter().map(|s| s.to_string()).collect()
            }
            _ => Vec::new(),
        },
        Ok(_) => Vec::new(),
    }
}

/// Locates `path` in the device text `src`.
fn locate(src: &str, path: &str) -> Result<Edit, String> {
    let scan = Scan { s: src.as_bytes() };
    let mut body = scan
        .struct_body(scan.skip(0))
        .ok_or("the file is not a `Device(...)`")?;
    let segs: Vec<&str> = path.split('.').collect();
    for (k, seg) in segs.iter().enumerate() {
        let here = segs[..k].join(".");
        let fields = scan.fields(body);
        let last = k + 1 == segs.len();
        match fields.iter().find(|(n, _, _)| n == seg) {
            Some((_, start, end)) if last => return Ok(Edit::Replace(*start, *end)),
            Some((_, start, end)) => {
                let text = &src[*start..*end];
                body = match scan.struct_body(*start) {
                    Some(b) if b <= *end => b,
                    _ if text == "None" => {
                        return Err(format!(
                            "`{}` is None on this device, so it has no `{}`; give the whole \
                             `{}` instead",
                            segs[..=k].join("."),
                            segs[k + 1],
                            segs[..=k].join(".")
                        ))
                    }
                    _ => {
                        return Err(format!(
                            "`{}` is a value (`{text}`), not a structure with fields",
                            segs[..=k].join(".")
                        ))
                    }
                };
            }
            None => {
                let valid = valid_fields(src, body);
                let at = if here.is_empty() {
                    "at the top level".to_string()
                } else {
                    format!("in `{here}`")
                };
                if !valid.iter().any(|v| v == seg) {
                    return Err(format!(
                        "no field `{seg}` {at}; the fields there are: {}",
                        valid.join(", ")
                    ));
                }
                if !last {
                    return Err(format!(
                        "`{}` is absent on this device (it is optional); give the whole `{}` \
                         instead",
                        segs[..=k].join("."),
                        segs[..=k].join(".")
                    ));
                }
                return Ok(Edit::Insert(body, seg.to_string()));
            }
        }
    }
    Err("empty path".into())
}

/// Applies `overrides` (path, RON value) to the device text `src` of
/// `file`, parses and validates the result as the file itself is. Errors
/// name the file, the path and the reason, and say which override caused
/// them.
pub fn apply_overrides(
    file: &str,
    src: &str,
    overrides: &[(String, String)],
) -> Result<DeviceSpec, Diag> {
    let mut text = src.to_string();
    let shown = |path: &str, value: &str| format!("--config-set {path}={value}");
    // The span each override's value occupies in `text`, to blame a parse
    // error on the right one.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (path, value) in overrides {
        let fail = |m: String| Diag {
            file: Some(file.to_string()),
            path: Some(path.clone()),
            ..Diag::msg(format!("{m} (from {})", shown(path, value)))
        };
        if value.trim().is_empty() {
            return Err(fail("empty value".into()));
        }
        let (start, removed, inserted) = match locate(&text, path).map_err(fail)? {
            Edit::Replace(a, b) => {
                text.replace_range(a..b, value);
                (a, b - a, value.len())
            }
            Edit::Insert(at, name) => {
                let ins = format!("{name}: {value}, ");
                text.insert_str(at, &ins);
                (at + name.len() + 2, 0, value.len())
            }
        };
        for s in spans.iter_mut() {
            if s.0 > start {
                s.0 = s.0 + inserted - removed;
                s.1 = s.1 + inserted - removed;
            }
        }
        spans.push((start, start + inserted));
    }
    let blame = |offset: Option<usize>| -> (String, String) {
        let k = offset
            .and_then(|o| spans.iter().position(|&(a, b)| o >= a && o <= b))
            .unwrap_or(overrides.len().saturating_sub(1));
        match overrides.get(k) {
            Some((p, v)) => (p.clone(), shown(p, v)),
            None => (String::new(), String::new()),
        }
    };
    let dev: DeviceSpec = ron_options().from_str(&text).map_err(|e| {
        let offset = offset_of(&text, e.position.line, e.position.col);
        let (path, shown) = blame(offset);
        let value = overrides
            .iter()
            .find(|(p, _)| *p == path)
            .map_or("", |(_, v)| v.as_str());
        Diag {
            file: Some(file.to_string()),
            path: Some(path),
            ..Diag::msg(format!(
                "{} (from {shown})",
                type_error(&e.code.to_string(), value)
            ))
        }
    })?;
    dev.validate().map_err(|(field, m)| {
        let all: Vec<String> = overrides.iter().map(|(p, v)| shown(p, v)).collect();
        Diag {
            file: Some(file.to_string()),
            path: Some(field),
            ..Diag::msg(format!("{m} (with {})", all.join(" ")))
        }
    })?;
    Ok(dev)
}

/// Says in words what the parser's complaint about an override's value means.
fn type_error(code: &str, value: &str) -> String {
    let v = value.trim();
    let number = v.parse::<f64>().is_ok();
    if code.starts_with("Expected integer") && v.starts_with('-') && number {
        return format!("`{v}` is negative; this field takes a non-negative integer");
    }
    if (code.starts_with("Expected integer") || code.starts_with("Expected comma"))
        && number
        && v.parse::<i64>().is_err()
    {
        return format!("`{v}` is not an integer; this field takes an integer");
    }
    if code.starts_with("Expected integer") {
        return format!("`{v}` is not a number; this field takes an integer");
    }
    if code.starts_with("Expected float") || code.starts_with("Expected number") {
        return format!("`{v}` is not a number; this field takes a number");
    }
    if code.starts_with("Expected") && v.parse::<f64>().is_err() && !v.contains('(') {
        return format!("{code} (a string is written in quotes: \"{v}\")");
    }
    code.to_string()
}

fn offset_of(text: &str, line: usize, col: usize) -> Option<usize> {
    let mut off = 0;
    for (n, l) in text.split_inclusive('\n').enumerate() {
        if n + 1 == line {
            return Some(off + col.saturating_sub(1).min(l.len()));
        }
        off += l.len();
    }
    None
}

/// The name a device variant goes by in reports: `h200[sm.count=66]`.
pub fn variant_name(base: &str, overrides: &[(String, String)]) -> String {
    if overrides.is_empty() {
        return base.to_string();
    }
    let parts: Vec<String> = overrides.iter().map(|(p, v)| format!("{p}={v}")).collect();
    format!("{base}[{}]", parts.join(" "))
}

/// Reads a device file and applies `overrides`; the variant's `name` and
/// `full_name` say what was changed.
pub fn load_device_with(
    path: &std::path::Path,
    overrides: &[(String, String)],
) -> Result<DeviceSpec, Diag> {
    if overrides.is_empty() {
        return crate::load_device(path);
    }
    // The file must be good on its own first, so that its errors point into it.
    let base = crate::load_device(path)?;
    let src = std::fs::read_to_string(path).map_err(|e| Diag {
        file: Some(path.display().to_string()),
        ..Diag::msg(format!("cannot read: {e}"))
    })?;
    let mut dev = apply_overrides(&path.display().to_string(), &src, overrides)?;
    dev.name = variant_name(&base.name, overrides);
    let parts: Vec<String> = overrides.iter().map(|(p, v)| format!("{p}={v}")).collect();
    dev.full_name = format!("{} ({})", dev.full_name, parts.join(", "));
    Ok(dev)
}

/// Every field path of the device types, found from a complete device text
/// (one with `l1` and `l2`): the leaves and the structures, in file order,
/// plus optional fields that text leaves out.
pub fn field_paths(src: &str) -> Vec<String> {
    let scan = Scan { s: src.as_bytes() };
    let mut out = Vec::new();
    if let Some(body) = scan.struct_body(scan.skip(0)) {
        walk(src, &scan, body, "", &mut out);
    }
    out
}

fn walk(src: &str, scan: &Scan, body: usize, prefix: &str, out: &mut Vec<String>) {
    let present = scan.fields(body);
    let mut names: Vec<String> = present.iter().map(|(n, _, _)| n.clone()).collect();
    for v in valid_fields(src, body) {
        if !names.contains(&v) {
            names.push(v);
        }
    }
    for name in names {
        let path = format!("{prefix}{name}");
        out.push(path.clone());
        if let Some((_, start, end)) = present.iter().find(|(n, _, _)| *n == name) {
            // Only plain structures (no enum variant name) are walked.
            let bare = src[*start..*end].starts_with('(') || src[*start..*end].starts_with("Some(");
            if let (true, Some(b)) = (bare, scan.struct_body(*start)) {
                if b <= *end {
                    walk(src, scan, b, &format!("{path}."), out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h200() -> String {
        let p = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/h200.ron");
        std::fs::read_to_string(p).unwrap()
    }

    fn set(p: &str, v: &str) -> Vec<(String, String)> {
        vec![(p.to_string(), v.to_string())]
    }

    #[test]
    fn nested_field_is_replaced_and_derived_values_follow() {
        let base: DeviceSpec = ron_options().from_str(&h200()).unwrap();
        let d =
            apply_overrides("h200.ron", &h200(), &set("l2.slice.size_bytes", "1310720")).unwrap();
        let l2 = d.l2.as_ref().unwrap();
        assert_eq!(l2.slice.size_bytes, 1310720);
        // Everything else is as in the file.
        let mut back = d.clone();
        back.l2.as_mut().unwrap().slice.size_bytes = base.l2.as_ref().unwrap().slice.size_bytes;
        assert_eq!(back, base);
        let d = apply_overrides("h200.ron", &h200(), &set("dram.channels", "47")).unwrap();
        assert!((d.peak_gbps() - base.peak_gbps() / 2.0).abs() < 1e-9);
    }

    #[test]
    fn enum_value_and_absent_optional_field() {
        let d =
            apply_overrides("h200.ron", &h200(), &set("load_rule", "Lines(bytes: 32)")).unwrap();
        assert_eq!(d.load_rule, lsu::Rule::Lines { bytes: 32 });
        let d = apply_overrides(
            "h200.ron",
            &h200(),
            &set("l2.slice_write_bytes_per_cycle", "10.0"),
        );
        assert_eq!(
            d.unwrap().l2.unwrap().slice_write_bytes_per_cycle,
            Some(10.0)
        );
    }

    #[test]
    fn unknown_field_lists_the_fields_at_that_level() {
        let e = apply_overrides("h200.ron", &h200(), &set("sm.cores", "3")).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("no field `cores` in `sm`"), "{m}");
        assert!(m.contains("count") && m.contains("lsu_queue_lines"), "{m}");
    }

    #[test]
    fn wrong_type_and_invalid_values_name_the_path() {
        let e = apply_overrides("h200.ron", &h200(), &set("sm.count", "many")).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("sm.count"));
        assert!(e.to_string().contains("--config-set sm.count=many"), "{e}");
        // 650000 bytes is not a whole number of 20-way sets of 128-byte lines.
        let e = apply_overrides("h200.ron", &h200(), &set("l2.slice.size_bytes", "650000"))
            .unwrap_err();
        assert_eq!(e.path.as_deref(), Some("l2.slice"), "{e}");
        let e = apply_overrides("h200.ron", &h200(), &set("sm.count", "0")).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("sm.count"), "{e}");
    }

    #[test]
    fn list_and_range_forms() {
        let s = parse_config_set("load_rule=Lines(bytes: 128),Lines(bytes: 32)").unwrap();
        assert_eq!(s.values, ["Lines(bytes: 128)", "Lines(bytes: 32)"]);
        let s = parse_config_set("sm.count=2..=4").unwrap();
        assert_eq!(s.values, ["2", "3", "4"]);
        assert!(parse_config_set("sm.count").is_err());
        assert!(parse_config_set("sm..count=3").is_err());
        let c = combinations(&[
            parse_config_set("a=1,2").unwrap(),
            parse_config_set("b=x,y").unwrap(),
        ]);
        assert_eq!(c.len(), 4);
        assert_eq!(
            c[1],
            vec![("a".into(), "1".into()), ("b".into(), "y".into())]
        );
    }
}
