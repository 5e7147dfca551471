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
            if let Some(at) = src.find(&quoted) {
                let before = &src[..at];
                let line = before.matches('\n').count() + 1;
                let col = at - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 2;
                self.pos = Some((line, col + self.text_col.unwrap_or(0)));
            }
        }
        self
    }
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
