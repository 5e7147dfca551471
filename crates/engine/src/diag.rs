//! Diagnostics that point into the user's files.

use std::fmt;

/// An error with as much location as is known: file, line and column,
/// field path, and the offending text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    /// File the error is in.
    pub file: Option<String>,
    /// 1-based line and column.
    pub pos: Option<(usize, usize)>,
    /// Field path inside the file, e.g. `kernel[1].Load.index`.
    pub path: Option<String>,
    /// The offending text (an expression), used to find the line.
    pub text: Option<String>,
    /// 0-based column inside `text`.
    pub text_col: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl std::error::Error for Diag {}

impl Diag {
    /// A bare message.
    pub fn msg(message: impl Into<String>) -> Diag {
        Diag {
            file: None,
            pos: None,
            path: None,
            text: None,
            text_col: None,
            message: message.into(),
        }
    }

    /// A message about a field.
    pub fn field(path: impl Into<String>, message: String) -> Diag {
        Diag {
            path: Some(path.into()),
            ..Diag::msg(message)
        }
    }

    /// Attaches the offending text.
    pub fn with_text(mut self, text: &str, col: Option<usize>) -> Diag {
        self.text = Some(text.to_string());
        self.text_col = col;
        self
    }

    /// Attaches the offending text, if any.
    pub fn with_text_opt(self, text: Option<String>, col: Option<usize>) -> Diag {
        match text {
            Some(t) => self.with_text(&t, col),
            None => self,
        }
    }

    /// Names the file and, from its source, finds the line of the text.
    pub fn in_file(mut self, file: &str, src: Option<&str>) -> Diag {
        if self.file.is_none() {
            self.file = Some(file.to_string());
        }
        if let (None, Some(src), Some(text)) = (self.pos, src, &self.text) {
            let quoted = format!("\"{text}\"");
            // The text as written in the field the path names: searched
            // from that field's key on (the same text may appear earlier,
            // in another field), else anywhere.
            let from = self
                .path
                .as_deref()
                .and_then(|p| {
                    let key = p.split(['[', '.']).next()?;
                    let at = field_start(src, key)?;
                    // `key[i]...`: from the list's `i`-th element on.
                    let index = p[key.len()..]
                        .strip_prefix('[')
                        .and_then(|r| r.split(']').next())
                        .and_then(|i| i.parse::<usize>().ok());
                    Some(match index {
                        Some(i) => nth_element(src, at, i).unwrap_or(at),
                        None => at,
                    })
                })
                .unwrap_or(0);
            let found = src[from..]
                .find(&quoted)
                .map(|i| from + i)
                .or_else(|| src.find(&quoted));
            if let Some(at) = found {
                let before = &src[..at];
                let line = before.matches('\n').count() + 1;
                let col = at - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 2;
                self.pos = Some((line, col + self.text_col.unwrap_or(0)));
            }
        }
        self
    }
}

/// Where the top-level field `key` (`key:`, at the start of a line but for
/// blanks) begins in a RON source.
fn field_start(src: &str, key: &str) -> Option<usize> {
    if key.is_empty() {
        return None;
    }
    let mut at = 0;
    for line in src.split_inclusive('\n') {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix(key) {
            if rest.trim_start().starts_with(':') {
                return Some(at + (line.len() - t.len()));
            }
        }
        at += line.len();
    }
    None
}

/// Where the `i`-th element of the first list (`[...]`) at or after
/// `from` in a RON source begins (strings and nested brackets skipped).
fn nth_element(src: &str, from: usize, i: usize) -> Option<usize> {
    let b = src.as_bytes();
    let mut k = from + src[from..].find('[')? + 1;
    let (mut depth, mut seen, mut in_str) = (0usize, 0usize, false);
    if i == 0 {
        return Some(k);
    }
    while k < b.len() {
        let c = b[k];
        if in_str {
            match c {
                b'\\' => k += 1,
                b'"' => in_str = false,
                _ => {}
            }
        } else {
            match c {
                b'"' => in_str = true,
                b'/' if b.get(k + 1) == Some(&b'/') => {
                    // A comment, to the end of its line.
                    k += src[k..].find('\n').unwrap_or(src.len() - k);
                    continue;
                }
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' if depth == 0 => return None,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => {
                    seen += 1;
                    if seen == i {
                        return Some(k + 1);
                    }
                }
                _ => {}
            }
        }
        k += 1;
    }
    None
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}")?;
            if let Some((l, c)) = self.pos {
                write!(f, ":{l}:{c}")?;
            }
            write!(f, ": ")?;
        }
        if let Some(p) = &self.path {
            write!(f, "{p}: ")?;
        }
        write!(f, "{}", self.message)?;
        if let (Some(t), Some(c)) = (&self.text, self.text_col) {
            // A window of the text around the column, for long ones.
            const SIDE: usize = 40;
            let chars: Vec<char> = t.chars().collect();
            let c = c.min(chars.len());
            let from = c.saturating_sub(SIDE);
            let to = (c + SIDE).min(chars.len());
            let pre = if from > 0 { "..." } else { "" };
            let post = if to < chars.len() { "..." } else { "" };
            let shown: String = chars[from..to].iter().collect();
            write!(
                f,
                "\n    {pre}{shown}{post}\n    {}^",
                " ".repeat(pre.len() + c - from)
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"Workload(
    params: [(name: "n", default: 8192), (name: "m", default: 0)],
    buffers: [(name: "a", bytes: "n"), // [x (
        (name: "b", bytes: "m")],
    kernel: [
        Load(buf: "a", index: "n", dst: "v"),
        Load(buf: "a", index: "v"),
    ],
)"#;

    fn pos(path: &str, text: &str) -> Option<(usize, usize)> {
        Diag::field(path, String::new())
            .with_text(text, None)
            .in_file("w.ron", Some(SRC))
            .pos
    }

    #[test]
    fn a_diagnostic_points_at_the_text_in_the_field_its_path_names() {
        // Not the parameter `m` on line 2 (the comment on line 3 skipped).
        assert_eq!(pos("buffers[1].bytes", "m"), Some((4, 29)));
        // Not `dst: "v"` of the statement before.
        assert_eq!(pos("kernel[1].Load.index", "v"), Some((7, 32)));
        assert_eq!(pos("kernel[0].Load.index", "n"), Some((6, 32)));
        // No path: the first occurrence.
        assert_eq!(pos("", "m"), Some((2, 50)));
    }
}
