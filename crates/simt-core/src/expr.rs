//! Integer expressions: parsing, name resolution and lane-parallel evaluation.
//!
//! The grammar is C's, restricted to 64-bit signed integers:
//!
//! ```text
//! expr    := or ( '?' expr ':' expr )?
//! or      := and ( '||' and )*          and := bitor ( '&&' bitor )*
//! bitor   := bitxor ( '|' bitxor )*     bitxor := bitand ( '^' bitand )*
//! bitand  := eq ( '&' eq )*             eq  := rel ( ('=='|'!=') rel )*
//! rel     := shift ( ('<'|'<='|'>'|'>=') shift )*
//! shift   := add ( ('<<'|'>>') add )*   add := mul ( ('+'|'-') mul )*
//! mul     := unary ( ('*'|'/'|'%') unary )*
//! unary   := ('-'|'!'|'~') unary | primary
//! primary := INT | NAME ( '.' NAME )? | NAME '(' expr (',' expr)* ')' | '(' expr ')'
//! ```
//!
//! Functions: `min(a, b)`, `max(a, b)`, `abs(a)`, `div_up(a, b)`.
//! Division truncates toward zero, as in C; a zero divisor in an active lane is
//! an error, and so is signed overflow.

use std::fmt;

/// A parse error, with the byte column (0-based) inside the expression text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at column {col} of `{text}`)")]
pub struct ParseError {
    /// What went wrong.
    pub message: String,
    /// 0-based byte offset into the expression text.
    pub col: usize,
    /// The expression text.
    pub text: String,
}

/// Binary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitOr,
    BitXor,
    And,
    Or,
    Min,
    Max,
    DivUp,
}

/// Unary operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum UnOp {
    Neg,
    Not,
    BitNot,
    Abs,
}

/// A parsed expression tree with unresolved names.
#[derive(Debug, Clone, PartialEq)]
pub enum Ast {
    /// Integer literal.
    Int(i64),
    /// A name such as `n`, `threadIdx.x` or `offset`.
    Name(String, usize),
    /// Unary operation.
    Un(UnOp, Box<Ast>),
    /// Binary operation.
    Bin(BinOp, Box<Ast>, Box<Ast>),
    /// `c ? a : b`.
    Select(Box<Ast>, Box<Ast>, Box<Ast>),
}

impl fmt::Display for BinOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::DivUp => "div_up",
        };
        f.write_str(s)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    Name(String),
    Op(&'static str),
}

const OPS: [&str; 25] = [
    "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+", "-", "*", "/", "%", "<", ">", "&", "|",
    "^", "!", "~", "(", ")", ",", "?", ":",
];

fn lex(text: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let err = |message: String, col: usize| ParseError {
        message,
        col,
        text: text.to_string(),
    };
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            let (radix, digits_start) = if c == b'0' && i + 1 < b.len() && (b[i + 1] | 0x20) == b'x'
            {
                (16, i + 2)
            } else {
                (10, i)
            };
            i = digits_start;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let digits: String = text[digits_start..i]
                .chars()
                .filter(|&c| c != '_')
                .collect();
            let v = i64::from_str_radix(&digits, radix).map_err(|e| {
                err(
                    format!("bad integer literal `{}`: {e}", &text[start..i]),
                    start,
                )
            })?;
            out.push((Tok::Int(v), start));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            out.push((Tok::Name(text[start..i].to_string()), start));
        } else {
            let rest = &text[i..];
            match OPS.iter().find(|op| rest.starts_with(*op)) {
                Some(op) => {
                    out.push((Tok::Op(op), i));
                    i += op.len();
                }
                None => {
                    let ch = rest.chars().next().unwrap_or('?');
                    return Err(err(format!("unexpected character `{ch}`"), i));
                }
            }
        }
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    text: &'a str,
}

impl Parser<'_> {
    fn err(&self, message: impl Into<String>) -> ParseError {
        let col = self
            .toks
            .get(self.pos)
            .map(|t| t.1)
            .unwrap_or(self.text.len());
        ParseError {
            message: message.into(),
            col,
            text: self.text.to_string(),
        }
    }
    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.pos) {
            Some((Tok::Op(o), _)) => Some(o),
            _ => None,
        }
    }
    fn eat(&mut self, op: &str) -> bool {
        if self.peek_op() == Some(op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, op: &str) -> Result<(), ParseError> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(self.err(format!("expected `{op}`")))
        }
    }

    fn expr(&mut self) -> Result<Ast, ParseError> {
        let c = self.binary(0)?;
        if self.eat("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.expr()?;
            return Ok(Ast::Select(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }

    fn binary(&mut self, level: usize) -> Result<Ast, ParseError> {
        const LEVELS: [&[(&str, BinOp)]; 10] = [
            &[("||", BinOp::Or)],
            &[("&&", BinOp::And)],
            &[("|", BinOp::BitOr)],
            &[("^", BinOp::BitXor)],
            &[("&", BinOp::BitAnd)],
            &[("==", BinOp::Eq), ("!=", BinOp::Ne)],
            &[
                ("<", BinOp::Lt),
                ("<=", BinOp::Le),
                (">", BinOp::Gt),
                (">=", BinOp::Ge),
            ],
            &[("<<", BinOp::Shl), (">>", BinOp::Shr)],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        'outer: loop {
            if let Some(op) = self.peek_op() {
                for (s, b) in LEVELS[level] {
                    if *s == op {
                        self.pos += 1;
                        let rhs = self.binary(level + 1)?;
                        lhs = Ast::Bin(*b, Box::new(lhs), Box::new(rhs));
                        continue 'outer;
                    }
                }
            }
            return Ok(lhs);
        }
    }

    fn unary(&mut self) -> Result<Ast, ParseError> {
        for (s, u) in [("-", UnOp::Neg), ("!", UnOp::Not), ("~", UnOp::BitNot)] {
            if self.eat(s) {
                let e = self.unary()?;
                return Ok(Ast::Un(u, Box::new(e)));
            }
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Ast, ParseError> {
        let Some((tok, col)) = self.toks.get(self.pos).cloned() else {
            return Err(self.err("unexpected end of expression"));
        };
        match tok {
            Tok::Int(v) => {
                self.pos += 1;
                Ok(Ast::Int(v))
            }
            Tok::Name(name) => {
                self.pos += 1;
                if self.eat("(") {
                    let mut args = vec![self.expr()?];
                    while self.eat(",") {
                        args.push(self.expr()?);
                    }
                    self.expect(")")?;
                    let arity = |n: usize| -> Result<(), ParseError> {
                        if args.len() == n {
                            Ok(())
                        } else {
                            Err(ParseError {
                                message: format!(
                                    "`{name}` takes {n} argument(s), got {}",
                                    args.len()
                                ),
                                col,
                                text: self.text.to_string(),
                            })
                        }
                    };
                    let bin = |op| {
                        let mut it = args.clone().into_iter();
                        Ast::Bin(
                            op,
                            Box::new(it.next().unwrap_or(Ast::Int(0))),
                            Box::new(it.next().unwrap_or(Ast::Int(0))),
                        )
                    };
                    match name.as_str() {
                        "min" => arity(2).map(|_| bin(BinOp::Min)),
                        "max" => arity(2).map(|_| bin(BinOp::Max)),
                        "div_up" => arity(2).map(|_| bin(BinOp::DivUp)),
                        "abs" => {
                            arity(1)?;
                            Ok(Ast::Un(UnOp::Abs, Box::new(args[0].clone())))
                        }
                        _ => Err(ParseError {
                            message: format!(
                                "unknown function `{name}` (known: min, max, abs, div_up)"
                            ),
                            col,
                            text: self.text.to_string(),
                        }),
                    }
                } else {
                    Ok(Ast::Name(name, col))
                }
            }
            Tok::Op("(") => {
                self.pos += 1;
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Op(o) => Err(self.err(format!("unexpected `{o}`"))),
        }
    }
}

/// Tokens an expression may have: the parser, and everything that walks
/// its tree, recurse once per level, and a tree is never deeper than its
/// tokens.
pub const MAX_TOKENS: usize = 1000;
/// Parentheses (and `?:`, unary operators) nested at most this deep.
pub const MAX_NESTING: usize = 64;

/// Parses an expression.
pub fn parse(text: &str) -> Result<Ast, ParseError> {
    let toks = lex(text)?;
    let mut p = Parser { toks, pos: 0, text };
    if p.toks.is_empty() {
        return Err(p.err("empty expression"));
    }
    // The text quoted in these errors is cut short: it may be huge.
    let short = |message: String, col: usize| ParseError {
        message,
        col,
        text: match text.char_indices().nth(60) {
            Some((i, _)) => format!("{}...", &text[..i]),
            None => text.to_string(),
        },
    };
    if p.toks.len() > MAX_TOKENS {
        return Err(short(
            format!(
                "expression too long: {} tokens (at most {MAX_TOKENS})",
                p.toks.len()
            ),
            p.toks[MAX_TOKENS].1,
        ));
    }
    let mut depth = 0usize;
    let mut operand_next = true;
    for (t, col) in &p.toks {
        let opens = match t {
            Tok::Op("(" | "?") => true,
            // A prefix operator nests the operand after it.
            Tok::Op("-" | "!" | "~") => operand_next,
            _ => false,
        };
        match t {
            _ if opens => depth += 1,
            Tok::Op(")" | ":") => depth = depth.saturating_sub(1),
            _ => {}
        }
        operand_next = matches!(t, Tok::Op(o) if *o != ")");
        if depth > MAX_NESTING {
            return Err(short(
                format!("nested more than {MAX_NESTING} levels deep"),
                *col,
            ));
        }
    }
    let e = p.expr()?;
    if p.pos != p.toks.len() {
        return Err(p.err("unexpected trailing input"));
    }
    Ok(e)
}

/// An arithmetic fault in one lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Division or remainder by zero.
    DivByZero,
    /// Signed 64-bit overflow.
    Overflow,
    /// Shift amount outside 0..64.
    BadShift,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fault::DivByZero => "division by zero",
            Fault::Overflow => "signed 64-bit overflow",
            Fault::BadShift => "shift amount outside 0..64",
        })
    }
}

/// Applies a binary operator to scalars.
pub fn apply_bin(op: BinOp, a: i64, b: i64) -> Result<i64, Fault> {
    use BinOp::*;
    let bool_ = |x: bool| x as i64;
    Ok(match op {
        Add => a.checked_add(b).ok_or(Fault::Overflow)?,
        Sub => a.checked_sub(b).ok_or(Fault::Overflow)?,
        Mul => a.checked_mul(b).ok_or(Fault::Overflow)?,
        Div => {
            if b == 0 {
                return Err(Fault::DivByZero);
            }
            a.checked_div(b).ok_or(Fault::Overflow)?
        }
        Rem => {
            if b == 0 {
                return Err(Fault::DivByZero);
            }
            a.checked_rem(b).ok_or(Fault::Overflow)?
        }
        DivUp => {
            if b == 0 {
                return Err(Fault::DivByZero);
            }
            let q = a.checked_div(b).ok_or(Fault::Overflow)?;
            if a % b != 0 && ((a < 0) == (b < 0)) {
                q + 1
            } else {
                q
            }
        }
        Shl => {
            if !(0..64).contains(&b) {
                return Err(Fault::BadShift);
            }
            let r = a << b;
            if r >> b != a {
                return Err(Fault::Overflow);
            }
            r
        }
        Shr => {
            if !(0..64).contains(&b) {
                return Err(Fault::BadShift);
            }
            a >> b
        }
        Lt => bool_(a < b),
        Le => bool_(a <= b),
        Gt => bool_(a > b),
        Ge => bool_(a >= b),
        Eq => bool_(a == b),
        Ne => bool_(a != b),
        BitAnd => a & b,
        BitOr => a | b,
        BitXor => a ^ b,
        And => bool_(a != 0 && b != 0),
        Or => bool_(a != 0 || b != 0),
        Min => a.min(b),
        Max => a.max(b),
    })
}

/// Applies a unary operator to a scalar.
pub fn apply_un(op: UnOp, a: i64) -> Result<i64, Fault> {
    Ok(match op {
        UnOp::Neg => a.checked_neg().ok_or(Fault::Overflow)?,
        UnOp::Not => (a == 0) as i64,
        UnOp::BitNot => !a,
        UnOp::Abs => a.checked_abs().ok_or(Fault::Overflow)?,
    })
}

/// What a name resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sym {
    /// A value known when the kernel is compiled (parameter, launch geometry).
    Const(i64),
    /// A per-lane value held in a register slot.
    Lane(u16),
}

/// A resolved expression, in postfix order, ready for lane-parallel evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    ops: Vec<Op>,
    depth: usize,
    /// Constant value, when the expression does not depend on any lane.
    pub konst: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Const(i64),
    Lane(u16),
    Un(UnOp),
    Bin(BinOp),
    Select,
    /// `Lane(s), Bin(b)` fused: the top of the stack `b` the slot, without
    /// copying the slot onto the stack first.
    BinLane(BinOp, u16),
    /// `Const(v), Bin(b)` fused.
    BinConst(BinOp, i64),
}

/// A name that does not resolve, with its column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    /// The name as written.
    pub name: String,
    /// 0-based column in the expression text.
    pub col: usize,
}

/// Constant-folding error while resolving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveError {
    /// A name that the resolver does not know.
    Unknown(UnknownName),
    /// A fault while folding constants (e.g. `n / 0` with constant operands).
    Fault(Fault),
}

impl Expr {
    /// Resolves names with `lookup` and folds constant sub-expressions.
    pub fn resolve(
        ast: &Ast,
        lookup: &mut dyn FnMut(&str) -> Option<Sym>,
    ) -> Result<Expr, ResolveError> {
        let mut ops = Vec::new();
        fold(ast, lookup, &mut ops)?;
        let ops = fuse(ops);
        let mut depth = 0usize;
        let mut max = 0usize;
        for op in &ops {
            match op {
                Op::Const(_) | Op::Lane(_) => depth += 1,
                Op::Un(_) | Op::BinLane(..) | Op::BinConst(..) => {}
                Op::Bin(_) => depth -= 1,
                Op::Select => depth -= 2,
            }
            max = max.max(depth);
        }
        let konst = match ops.as_slice() {
            [Op::Const(v)] => Some(*v),
            _ => None,
        };
        Ok(Expr {
            ops,
            depth: max,
            konst,
        })
    }

    /// The register slots the expression reads.
    pub fn lanes(&self) -> impl Iterator<Item = u16> + '_ {
        self.ops.iter().filter_map(|o| match o {
            Op::Lane(s) | Op::BinLane(_, s) => Some(*s),
            _ => None,
        })
    }

    /// Stack depth needed to evaluate (besides the output, which holds
    /// the bottom of the stack).
    pub fn depth(&self) -> usize {
        self.depth.saturating_sub(1).max(1)
    }

    /// Evaluates for all 32 lanes; faults are reported only for lanes in `mask`.
    /// `stack` must hold at least [`Expr::depth`] entries.
    #[inline]
    pub fn eval(
        &self,
        regs: &[[i64; 32]],
        mask: u32,
        stack: &mut [[i64; 32]],
        out: &mut [i64; 32],
    ) -> Result<(), (Fault, usize)> {
        if let Some(v) = self.konst {
            *out = [v; 32];
            return Ok(());
        }
        // Entry 0 of the stack is `out`, entry i > 0 is `stack[i - 1]`, so
        // the result needs no final copy.
        fn top<'a>(
            out: &'a mut [i64; 32],
            stack: &'a mut [[i64; 32]],
            i: usize,
        ) -> &'a mut [i64; 32] {
            if i == 0 {
                out
            } else {
                &mut stack[i - 1]
            }
        }
        // Entries i and i + 1.
        fn pair<'a>(
            out: &'a mut [i64; 32],
            stack: &'a mut [[i64; 32]],
            i: usize,
        ) -> (&'a mut [i64; 32], &'a [i64; 32]) {
            if i == 0 {
                (out, &stack[0])
            } else {
                let (lo, hi) = stack.split_at_mut(i);
                (&mut lo[i - 1], &hi[0])
            }
        }
        let mut sp = 0usize;
        for op in &self.ops {
            match *op {
                Op::Const(v) => {
                    *top(out, stack, sp) = [v; 32];
                    sp += 1;
                }
                Op::Lane(s) => {
                    *top(out, stack, sp) = regs[s as usize];
                    sp += 1;
                }
                Op::Un(u) => un_lanes(u, top(out, stack, sp - 1), mask)?,
                Op::Bin(b) => {
                    let (a, c) = pair(out, stack, sp - 2);
                    bin_lanes(b, a, c, mask)?;
                    sp -= 1;
                }
                Op::BinLane(b, s) => {
                    bin_lanes(b, top(out, stack, sp - 1), &regs[s as usize], mask)?
                }
                Op::BinConst(b, v) => bin_lanes(b, top(out, stack, sp - 1), &[v; 32], mask)?,
                Op::Select => {
                    // Entries sp - 2 and sp - 1 are stack[sp - 3] and stack[sp - 2].
                    let (x, y) = (stack[sp - 3], stack[sp - 2]);
                    let c = top(out, stack, sp - 3);
                    for l in 0..32 {
                        c[l] = if c[l] != 0 { x[l] } else { y[l] };
                    }
                    sp -= 2;
                }
            }
        }
        Ok(())
    }
}

/// Fuses each `Lane` or `Const` operand that a binary operator takes at
/// once into the operator, so that evaluation does not copy it onto the
/// stack. The operations and their order are unchanged.
fn fuse(ops: Vec<Op>) -> Vec<Op> {
    let mut out: Vec<Op> = Vec::with_capacity(ops.len());
    for op in ops {
        match (out.last().copied(), op) {
            // Only when something is below the operand: `Lane(s), Bin(b)`
            // with a one-entry stack cannot occur in a valid expression.
            (Some(Op::Lane(s)), Op::Bin(b)) if out.len() >= 2 => {
                out.pop();
                out.push(Op::BinLane(b, s));
            }
            (Some(Op::Const(v)), Op::Bin(b)) if out.len() >= 2 => {
                out.pop();
                out.push(Op::BinConst(b, v));
            }
            _ => out.push(op),
        }
    }
    out
}

/// A per-lane value that is affine in the block index: lane `l` of the
/// block at `b` holds `c[l] + k . b` (the same `k` in every lane).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Affine {
    pub c: [i64; 32],
    pub k: [i64; 3],
}

impl Affine {
    pub const ZERO: Affine = Affine {
        c: [0; 32],
        k: [0; 3],
    };

    fn konst(&self) -> bool {
        self.k == [0; 3]
    }

    /// Whether the value of every lane in `mask`, for every block of
    /// `grid`, fits 64 bits; then no block computes it with an overflow.
    pub fn fits(&self, mask: u32, grid: [u32; 3]) -> bool {
        let (lo, hi) = self.range(grid);
        (0..32).filter(|l| mask >> l & 1 == 1).all(|l| {
            let c = self.c[l] as i128;
            c + lo >= i64::MIN as i128 && c + hi <= i64::MAX as i128
        })
    }

    /// Least and greatest of `k . b` over the grid.
    pub fn range(&self, grid: [u32; 3]) -> (i128, i128) {
        grid_range(self.k.map(|k| k as i128), grid)
    }

    /// The value of lanes in `mask` if it is the same in all of them.
    fn uniform(&self, mask: u32) -> Option<i64> {
        let first = mask.trailing_zeros() as usize;
        let v = *self.c.get(first)?;
        (0..32)
            .filter(|l| mask >> l & 1 == 1)
            .all(|l| self.c[l] == v)
            .then_some(v)
    }
}

/// Least and greatest of `k . b` over the blocks `b` of `grid`.
fn grid_range(k: [i128; 3], grid: [u32; 3]) -> (i128, i128) {
    k.iter().zip(grid).fold((0, 0), |(lo, hi), (&k, g)| {
        let x = k * (g.max(1) - 1) as i128;
        (lo + x.min(0), hi + x.max(0))
    })
}

fn affine_bin(b: BinOp, x: &Affine, y: &Affine, mask: u32, grid: [u32; 3]) -> Option<Affine> {
    if x.konst() && y.konst() {
        // As the warp computes it: the same in every block.
        let mut c = x.c;
        bin_lanes(b, &mut c, &y.c, mask).ok()?;
        return Some(Affine { c, k: [0; 3] });
    }
    let mut r = Affine::ZERO;
    match b {
        BinOp::Add | BinOp::Sub => {
            for l in 0..32 {
                r.c[l] = if b == BinOp::Add {
                    x.c[l].wrapping_add(y.c[l])
                } else {
                    x.c[l].wrapping_sub(y.c[l])
                };
            }
            for d in 0..3 {
                r.k[d] = if b == BinOp::Add {
                    x.k[d].checked_add(y.k[d])?
                } else {
                    x.k[d].checked_sub(y.k[d])?
                };
            }
            if (0..32).any(|l| {
                mask >> l & 1 == 1 && {
                    let e = if b == BinOp::Add {
                        x.c[l] as i128 + y.c[l] as i128
                    } else {
                        x.c[l] as i128 - y.c[l] as i128
                    };
                    e != r.c[l] as i128
                }
            }) {
                return None;
            }
        }
        BinOp::Mul => {
            // A lane-uniform factor that does not depend on the block.
            let (u, v) = if x.konst() {
                (x.uniform(mask)?, y)
            } else if y.konst() {
                (y.uniform(mask)?, x)
            } else {
                return None;
            };
            for l in 0..32 {
                if mask >> l & 1 == 1 {
                    r.c[l] = v.c[l].checked_mul(u)?;
                }
            }
            for d in 0..3 {
                r.k[d] = v.k[d].checked_mul(u)?;
            }
        }
        BinOp::Div | BinOp::Rem => {
            // By a positive constant that divides every block coefficient,
            // of a value that is never negative: (c + k.b) / d = c / d + (k / d).b.
            if !y.konst() {
                return None;
            }
            let d = y.uniform(mask)?;
            if d <= 0 || x.k.iter().any(|&k| k < 0 || k % d != 0) {
                return None;
            }
            for l in 0..32 {
                if mask >> l & 1 == 1 {
                    if x.c[l] < 0 {
                        return None;
                    }
                    r.c[l] = if b == BinOp::Div {
                        x.c[l] / d
                    } else {
                        x.c[l] % d
                    };
                }
            }
            if b == BinOp::Div {
                for i in 0..3 {
                    r.k[i] = x.k[i] / d;
                }
            }
        }
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
            // A comparison that comes out the same in every block (a bounds
            // guard such as `i < n` that every block passes): from the range
            // of x - y over the grid, exactly.
            let (lo, hi) = grid_range([0, 1, 2].map(|d| x.k[d] as i128 - y.k[d] as i128), grid);
            for l in 0..32 {
                if mask >> l & 1 == 0 {
                    continue;
                }
                let c = x.c[l] as i128 - y.c[l] as i128;
                let (lo, hi) = (c + lo, c + hi);
                let always = |f: &dyn Fn(i128) -> bool| -> Option<bool> {
                    match (f(lo), f(hi)) {
                        (a, b) if a == b => Some(a),
                        _ => None,
                    }
                };
                let v = match b {
                    BinOp::Lt => always(&|d| d < 0)?,
                    BinOp::Le => always(&|d| d <= 0)?,
                    BinOp::Gt => always(&|d| d > 0)?,
                    BinOp::Ge => always(&|d| d >= 0)?,
                    BinOp::Eq if lo == hi => lo == 0,
                    BinOp::Eq | BinOp::Ne if lo > 0 || hi < 0 => b == BinOp::Ne,
                    BinOp::Ne if lo == hi => lo != 0,
                    _ => return None,
                };
                r.c[l] = v as i64;
            }
            return Some(r);
        }
        _ => return None,
    }
    r.fits(mask, grid).then_some(r)
}

impl Expr {
    /// Evaluates with block-affine values (see [`Affine`]); `None` where
    /// the result is not affine in the block index or some block would
    /// fault computing it.
    pub(crate) fn eval_affine(&self, regs: &[Affine], mask: u32, grid: [u32; 3]) -> Option<Affine> {
        let mut st: Vec<Affine> = Vec::with_capacity(self.depth + 1);
        for op in &self.ops {
            match *op {
                Op::Const(v) => st.push(Affine {
                    c: [v; 32],
                    k: [0; 3],
                }),
                Op::Lane(s) => st.push(regs[s as usize]),
                Op::Un(u) => {
                    let a = st.last_mut()?;
                    if a.konst() {
                        un_lanes(u, &mut a.c, mask).ok()?;
                    } else if u == UnOp::Neg {
                        for l in 0..32 {
                            a.c[l] = a.c[l].wrapping_neg();
                        }
                        for d in 0..3 {
                            a.k[d] = a.k[d].checked_neg()?;
                        }
                        if !a.fits(mask, grid) {
                            return None;
                        }
                    } else {
                        return None;
                    }
                }
                Op::Bin(b) => {
                    let y = st.pop()?;
                    let x = st.pop()?;
                    st.push(affine_bin(b, &x, &y, mask, grid)?);
                }
                Op::BinLane(b, s) => {
                    let x = st.pop()?;
                    st.push(affine_bin(b, &x, &regs[s as usize], mask, grid)?);
                }
                Op::BinConst(b, v) => {
                    let x = st.pop()?;
                    let y = Affine {
                        c: [v; 32],
                        k: [0; 3],
                    };
                    st.push(affine_bin(b, &x, &y, mask, grid)?);
                }
                Op::Select => {
                    let y = st.pop()?;
                    let x = st.pop()?;
                    let c = st.pop()?;
                    if !c.konst() {
                        return None;
                    }
                    let pick = |l: usize| c.c[l] != 0;
                    let lanes = (0..32).filter(|l| mask >> l & 1 == 1);
                    let k = if x.k == y.k || lanes.clone().all(pick) {
                        x.k
                    } else if lanes.clone().all(|l| !pick(l)) {
                        y.k
                    } else {
                        return None;
                    };
                    let mut r = Affine { c: [0; 32], k };
                    for l in 0..32 {
                        r.c[l] = if pick(l) { x.c[l] } else { y.c[l] };
                    }
                    st.push(r);
                }
            }
        }
        st.pop()
    }
}

#[inline]
fn un_lanes(u: UnOp, a: &mut [i64; 32], mask: u32) -> Result<(), (Fault, usize)> {
    for (l, x) in a.iter_mut().enumerate() {
        match apply_un(u, *x) {
            Ok(v) => *x = v,
            Err(f) if mask >> l & 1 == 1 => return Err((f, l)),
            Err(_) => *x = 0,
        }
    }
    Ok(())
}

#[inline]
fn bin_lanes(b: BinOp, a: &mut [i64; 32], c: &[i64; 32], mask: u32) -> Result<(), (Fault, usize)> {
    // The common operators get branch-free loops; the rest go through apply_bin.
    match b {
        BinOp::Add | BinOp::Sub | BinOp::Mul => {
            let mut bad = 0u32;
            for l in 0..32 {
                let (v, o) = match b {
                    BinOp::Add => a[l].overflowing_add(c[l]),
                    BinOp::Sub => a[l].overflowing_sub(c[l]),
                    _ => a[l].overflowing_mul(c[l]),
                };
                a[l] = v;
                bad |= (o as u32) << l;
            }
            bad &= mask;
            if bad != 0 {
                return Err((Fault::Overflow, bad.trailing_zeros() as usize));
            }
            Ok(())
        }
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
            for l in 0..32 {
                a[l] = match b {
                    BinOp::Lt => a[l] < c[l],
                    BinOp::Le => a[l] <= c[l],
                    BinOp::Gt => a[l] > c[l],
                    BinOp::Ge => a[l] >= c[l],
                    BinOp::Eq => a[l] == c[l],
                    _ => a[l] != c[l],
                } as i64;
            }
            Ok(())
        }
        _ => {
            for l in 0..32 {
                match apply_bin(b, a[l], c[l]) {
                    Ok(v) => a[l] = v,
                    Err(f) if mask >> l & 1 == 1 => return Err((f, l)),
                    Err(_) => a[l] = 0,
                }
            }
            Ok(())
        }
    }
}

fn fold(
    ast: &Ast,
    lookup: &mut dyn FnMut(&str) -> Option<Sym>,
    ops: &mut Vec<Op>,
) -> Result<(), ResolveError> {
    let top_const = |ops: &Vec<Op>, n: usize| -> Option<Vec<i64>> {
        if ops.len() < n {
            return None;
        }
        ops[ops.len() - n..]
            .iter()
            .map(|o| match o {
                Op::Const(v) => Some(*v),
                _ => None,
            })
            .collect()
    };
    match ast {
        Ast::Int(v) => ops.push(Op::Const(*v)),
        Ast::Name(n, col) => match lookup(n) {
            Some(Sym::Const(v)) => ops.push(Op::Const(v)),
            Some(Sym::Lane(s)) => ops.push(Op::Lane(s)),
            None => {
                return Err(ResolveError::Unknown(UnknownName {
                    name: n.clone(),
                    col: *col,
                }))
            }
        },
        Ast::Un(u, a) => {
            let before = ops.len();
            fold(a, lookup, ops)?;
            if ops.len() == before + 1 {
                if let Some(v) = top_const(ops, 1) {
                    let r = apply_un(*u, v[0]).map_err(ResolveError::Fault)?;
                    ops.pop();
                    ops.push(Op::Const(r));
                    return Ok(());
                }
            }
            ops.push(Op::Un(*u));
        }
        Ast::Bin(b, x, y) => {
            let before = ops.len();
            fold(x, lookup, ops)?;
            let mid = ops.len();
            fold(y, lookup, ops)?;
            if mid == before + 1 && ops.len() == mid + 1 {
                if let Some(v) = top_const(ops, 2) {
                    let r = apply_bin(*b, v[0], v[1]).map_err(ResolveError::Fault)?;
                    ops.truncate(before);
                    ops.push(Op::Const(r));
                    return Ok(());
                }
            }
            ops.push(Op::Bin(*b));
        }
        Ast::Select(c, x, y) => {
            let before = ops.len();
            fold(c, lookup, ops)?;
            if ops.len() == before + 1 {
                if let Some(v) = top_const(ops, 1) {
                    ops.pop();
                    return fold(if v[0] != 0 { x } else { y }, lookup, ops);
                }
            }
            fold(x, lookup, ops)?;
            fold(y, lookup, ops)?;
            ops.push(Op::Select);
        }
    }
    Ok(())
}

/// Evaluates an expression whose names all resolve to constants.
pub fn eval_const(
    text: &str,
    lookup: &mut dyn FnMut(&str) -> Option<i64>,
) -> Result<i64, ConstEvalError> {
    let ast = parse(text).map_err(ConstEvalError::Parse)?;
    let mut l = |n: &str| lookup(n).map(Sym::Const);
    match Expr::resolve(&ast, &mut l) {
        Ok(e) => e.konst.ok_or_else(|| {
            ConstEvalError::Parse(ParseError {
                message: "expression is not constant".into(),
                col: 0,
                text: text.into(),
            })
        }),
        Err(ResolveError::Unknown(u)) => Err(ConstEvalError::Unknown(u)),
        Err(ResolveError::Fault(f)) => Err(ConstEvalError::Fault(f)),
    }
}

/// Error from [`eval_const`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConstEvalError {
    /// The text does not parse.
    #[error("{0}")]
    Parse(ParseError),
    /// A name is not known.
    #[error("unknown name `{}` at column {}", .0.name, .0.col)]
    Unknown(UnknownName),
    /// Arithmetic fault.
    #[error("{0}")]
    Fault(Fault),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(t: &str) -> Result<i64, ConstEvalError> {
        eval_const(t, &mut |n| match n {
            "n" => Some(10),
            "blockDim.x" => Some(256),
            _ => None,
        })
    }

    #[test]
    fn precedence_follows_c() {
        assert_eq!(ev("1 + 2 * 3").unwrap(), 7);
        assert_eq!(ev("(1 + 2) * 3").unwrap(), 9);
        assert_eq!(ev("1 << 2 + 1").unwrap(), 8);
        assert_eq!(ev("n < 11 && n > 9").unwrap(), 1);
        assert_eq!(ev("-7 / 2").unwrap(), -3);
        assert_eq!(ev("-7 % 2").unwrap(), -1);
        assert_eq!(ev("n > 5 ? 1 : 2").unwrap(), 1);
        assert_eq!(ev("min(n, 3) + max(2, blockDim.x)").unwrap(), 259);
        assert_eq!(ev("div_up(10, 4)").unwrap(), 3);
        assert_eq!(ev("0x100 + 1_000").unwrap(), 1256);
    }

    #[test]
    fn errors_name_the_column() {
        match ev("n + m") {
            Err(ConstEvalError::Unknown(u)) => assert_eq!((u.name.as_str(), u.col), ("m", 4)),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            ev("n / 0"),
            Err(ConstEvalError::Fault(Fault::DivByZero))
        ));
        match ev("n + * 2") {
            Err(ConstEvalError::Parse(p)) => assert_eq!(p.col, 4),
            other => panic!("{other:?}"),
        }
        assert!(matches!(ev("n +"), Err(ConstEvalError::Parse(_))));
        assert!(matches!(ev("foo(1)"), Err(ConstEvalError::Parse(_))));
        assert!(matches!(
            ev("9223372036854775807 + 1"),
            Err(ConstEvalError::Fault(Fault::Overflow))
        ));
    }

    #[test]
    fn lanes_evaluate_independently() {
        let ast = parse("t * 4 + 1").unwrap();
        let e = Expr::resolve(&ast, &mut |n| (n == "t").then_some(Sym::Lane(0))).unwrap();
        let mut regs = vec![[0i64; 32]];
        for (l, r) in regs[0].iter_mut().enumerate() {
            *r = l as i64;
        }
        let mut stack = vec![[0i64; 32]; e.depth()];
        let mut out = [0i64; 32];
        e.eval(&regs, u32::MAX, &mut stack, &mut out).unwrap();
        assert_eq!(out[31], 125);
        let div = Expr::resolve(&parse("8 / t").unwrap(), &mut |_| Some(Sym::Lane(0))).unwrap();
        // Lane 0 divides by zero: an error only if lane 0 is active.
        assert_eq!(
            div.eval(&regs, 0b11, &mut stack, &mut out),
            Err((Fault::DivByZero, 0))
        );
        assert!(div.eval(&regs, 0b10, &mut stack, &mut out).is_ok());
    }
}
