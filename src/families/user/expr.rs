//! The expressions of a user kernel's study entry: lengths, the launch grid and the metric
//! over the size parameters (`12*N`, `ROWS*COLS`, `2^20`), scalar values, and the reference
//! per output element (`a * x + y`).
//!
//! Written here rather than taken from an expression crate: a reference is evaluated once per
//! output element (2^24 and more), so names are resolved to slots once, at parse time, and an
//! evaluation is a walk over a small tree with no lookup by name.

/// A parsed expression whose names are slots of the values given to [`Expr::eval`].
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Number(f64),
    Slot(usize),
    Neg(Box<Expr>),
    Binary(Op, Box<Expr>, Box<Expr>),
    Call(Func, Vec<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
}

/// A function an expression may call, by its lowercase name (`sqrt`, `min`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum Func {
    Sqrt,
    Abs,
    Exp,
    Log,
    Sin,
    Cos,
    Min,
    Max,
    Floor,
    Ceil,
}

/// `text` as an error quotes it: over 80 characters, its first 60 (one readable line).
fn shortened(text: &str) -> String {
    if text.chars().count() <= 80 {
        return text.to_string();
    }
    format!("{}…", text.chars().take(60).collect::<String>())
}

/// Why an expression cannot be read, with the position (0-based character) where it stops.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read '{}' at character {}: {reason}", shortened(text), at + 1)]
pub struct ExprError {
    pub text: String,
    pub at: usize,
    pub reason: String,
}

impl Expr {
    /// Parses `text`; `slot` gives each name's slot, or `None` for a name not allowed here.
    pub fn parse(text: &str, slot: &dyn Fn(&str) -> Option<usize>) -> Result<Expr, ExprError> {
        let mut p = Parser {
            chars: text.chars().collect(),
            pos: 0,
            slot,
            depth: 0,
        };
        if p.chars.len() > MAX_CHARS {
            return Err(p.error(format!(
                "longer than {MAX_CHARS} characters; a size or value expression is a formula, \
                 not a program"
            )));
        }
        let e = p.sum()?;
        p.skip_while(char::is_whitespace);
        if p.pos < p.chars.len() {
            return Err(p.error(format!("unexpected '{}'", p.chars[p.pos])));
        }
        Ok(e)
    }

    /// The value with `slots` as the names' values.
    pub fn eval(&self, slots: &[f64]) -> f64 {
        match self {
            Expr::Number(v) => *v,
            Expr::Slot(i) => slots.get(*i).copied().unwrap_or(f64::NAN),
            Expr::Neg(e) => -e.eval(slots),
            Expr::Binary(op, a, b) => {
                let (a, b) = (a.eval(slots), b.eval(slots));
                match op {
                    Op::Add => a + b,
                    Op::Sub => a - b,
                    Op::Mul => a * b,
                    Op::Div => a / b,
                    Op::Rem => a % b,
                    Op::Pow => a.powf(b),
                }
            }
            Expr::Call(f, args) => {
                let x = args.first().map_or(f64::NAN, |a| a.eval(slots));
                let y = || args.get(1).map_or(f64::NAN, |a| a.eval(slots));
                match f {
                    Func::Sqrt => x.sqrt(),
                    Func::Abs => x.abs(),
                    Func::Exp => x.exp(),
                    Func::Log => x.ln(),
                    Func::Sin => x.sin(),
                    Func::Cos => x.cos(),
                    Func::Floor => x.floor(),
                    Func::Ceil => x.ceil(),
                    Func::Min => x.min(y()),
                    Func::Max => x.max(y()),
                }
            }
        }
    }

    pub fn reads(&self, i: usize) -> bool {
        match self {
            Expr::Number(_) => false,
            Expr::Slot(s) => *s == i,
            Expr::Neg(e) => e.reads(i),
            Expr::Binary(_, a, b) => a.reads(i) || b.reads(i),
            Expr::Call(_, args) => args.iter().any(|a| a.reads(i)),
        }
    }
}

/// The deepest nesting of parentheses, signs, powers and calls an expression may have: the
/// parser recurses once per level, and a deeper text would overflow its stack.
pub const MAX_NESTING: usize = 64;
/// The longest expression: a flat chain of operators builds a tree as deep as it is long,
/// which evaluating and dropping walk recursively.
pub const MAX_CHARS: usize = 4096;

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    slot: &'a dyn Fn(&str) -> Option<usize>,
    /// Levels of [`Parser::unary`] entered and not yet left.
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, reason: String) -> ExprError {
        ExprError {
            text: self.chars.iter().collect(),
            at: self.pos,
            reason,
        }
    }

    /// Whether the next character (spaces not skipped) satisfies `f`.
    fn next_is(&self, f: impl Fn(char) -> bool) -> bool {
        self.chars.get(self.pos).is_some_and(|c| f(*c))
    }

    fn skip_while(&mut self, f: impl Fn(char) -> bool) {
        while self.next_is(&f) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_while(char::is_whitespace);
        self.chars.get(self.pos).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        let next = self.peek() == Some(c);
        self.pos += usize::from(next);
        next
    }

    /// sum := product (('+' | '-') product)*
    fn sum(&mut self) -> Result<Expr, ExprError> {
        self.left_to_right(&[('+', Op::Add), ('-', Op::Sub)], Self::product)
    }

    /// product := unary (('*' | '/' | '%') unary)*
    fn product(&mut self) -> Result<Expr, ExprError> {
        self.left_to_right(
            &[('*', Op::Mul), ('/', Op::Div), ('%', Op::Rem)],
            Self::unary,
        )
    }

    /// operand (op operand)* for the operators `ops` of one precedence, grouped from the left.
    fn left_to_right(
        &mut self,
        ops: &[(char, Op)],
        operand: fn(&mut Self) -> Result<Expr, ExprError>,
    ) -> Result<Expr, ExprError> {
        let mut left = operand(self)?;
        loop {
            let next = self.peek();
            let Some(&(_, op)) = ops.iter().find(|(c, _)| next == Some(*c)) else {
                return Ok(left);
            };
            self.pos += 1;
            left = Expr::Binary(op, Box::new(left), Box::new(operand(self)?));
        }
    }

    /// unary := '-' unary | power. Counts the depth: every nesting passes through here (a sign,
    /// a power's exponent, and via an atom a parenthesis or a call's argument).
    fn unary(&mut self) -> Result<Expr, ExprError> {
        if self.depth >= MAX_NESTING {
            return Err(self.error(format!(
                "nested more than {MAX_NESTING} levels deep (parentheses, signs, powers, calls)"
            )));
        }
        self.depth += 1;
        let e = if self.eat('-') {
            self.unary().map(|e| Expr::Neg(Box::new(e)))
        } else {
            self.power()
        };
        self.depth -= 1;
        e
    }

    /// power := atom ('^' unary)?   (right-associative: 2^3^2 is 2^9)
    fn power(&mut self) -> Result<Expr, ExprError> {
        let base = self.atom()?;
        if self.eat('^') {
            return Ok(Expr::Binary(
                Op::Pow,
                Box::new(base),
                Box::new(self.unary()?),
            ));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Expr, ExprError> {
        match self.peek() {
            None => Err(self.error("the expression ends where a value is expected".into())),
            Some('(') => {
                self.pos += 1;
                let e = self.sum()?;
                if !self.eat(')') {
                    return Err(self.error("a ')' is missing".into()));
                }
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_alphabetic() || c == '_' => self.name(),
            Some(c) => Err(self.error(format!("unexpected '{c}'"))),
        }
    }

    fn number(&mut self) -> Result<Expr, ExprError> {
        let start = self.pos;
        self.skip_while(|c| c.is_ascii_digit() || c == '.' || c == '_');
        // An exponent: 1e-6, 2.5E3.
        if self.next_is(|c| c == 'e' || c == 'E') {
            let mark = self.pos;
            self.pos += 1;
            if self.next_is(|c| c == '-' || c == '+') {
                self.pos += 1;
            }
            if self.next_is(|c| c.is_ascii_digit()) {
                self.skip_while(|c| c.is_ascii_digit());
            } else {
                self.pos = mark;
            }
        }
        let text: String = self.chars[start..self.pos]
            .iter()
            .filter(|c| **c != '_')
            .collect();
        text.parse::<f64>().map(Expr::Number).map_err(|_| {
            self.pos = start;
            self.error(format!("'{text}' is not a number"))
        })
    }

    fn name(&mut self) -> Result<Expr, ExprError> {
        let start = self.pos;
        self.skip_while(|c| c.is_alphanumeric() || c == '_');
        let name: String = self.chars[start..self.pos].iter().collect();
        if self.peek() == Some('(') {
            let Ok(func) = name.parse::<Func>() else {
                self.pos = start;
                return Err(self.error(format!(
                    "unknown function '{name}' (known: sqrt, abs, exp, log, sin, cos, floor, \
                     ceil, min, max)"
                )));
            };
            self.pos += 1;
            let mut args = vec![self.sum()?];
            while self.eat(',') {
                args.push(self.sum()?);
            }
            if !self.eat(')') {
                return Err(self.error("a ')' is missing".into()));
            }
            let arity = 1 + usize::from(matches!(func, Func::Min | Func::Max));
            if args.len() != arity {
                return Err(self.error(format!(
                    "{name} takes {arity} argument(s), not {}",
                    args.len()
                )));
            }
            return Ok(Expr::Call(func, args));
        }
        let Some(i) = (self.slot)(&name) else {
            self.pos = start;
            return Err(self.error(format!("unknown name '{name}'")));
        };
        Ok(Expr::Slot(i))
    }
}

/// The size parameters every expression may name, in slot order: `N` (the elements of the
/// size: rows, or rows x cols), `ROWS` and `COLS` (0 for a vector size).
pub const SIZE_NAMES: [&str; 3] = ["N", "ROWS", "COLS"];

pub fn size_slot(name: &str) -> Option<usize> {
    SIZE_NAMES.iter().position(|n| *n == name)
}

/// A parsed expression over the size parameters only, with its text for messages.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeExpr {
    pub text: String,
    pub expr: Expr,
}

impl SizeExpr {
    pub fn parse(text: &str) -> Result<SizeExpr, ExprError> {
        Ok(SizeExpr {
            text: text.to_string(),
            expr: Expr::parse(text, &size_slot)?,
        })
    }

    pub fn at(&self, size: crate::rows::Size) -> f64 {
        self.expr.eval(&size_values(size))
    }

    /// A count at `size`: a whole number from 0 to `u64::MAX`, or why not.
    pub fn count(&self, size: crate::rows::Size) -> Result<u64, NotACount> {
        let v = self.at(size);
        if !(v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < u64::MAX as f64) {
            return Err(NotACount {
                text: self.text.clone(),
                value: v,
                size,
            });
        }
        Ok(v as u64)
    }
}

/// A size expression whose value at a size is not a count.
#[derive(Debug, thiserror::Error)]
#[error("'{text}' is {value} at size {size}, not a whole number of at least 0")]
pub struct NotACount {
    pub text: String,
    pub value: f64,
    pub size: crate::rows::Size,
}

/// The size parameters' values, in [`SIZE_NAMES`] order.
pub fn size_values(size: crate::rows::Size) -> [f64; 3] {
    [size.elements() as f64, size.rows as f64, size.cols as f64]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::Size;

    fn value(text: &str) -> f64 {
        SizeExpr::parse(text).unwrap().at(Size::vector(1 << 20))
    }

    #[test]
    fn arithmetic_follows_the_usual_precedence() {
        assert_eq!(value("12*N"), 12.0 * 1048576.0);
        assert_eq!(value("1 + 2 * 3"), 7.0);
        assert_eq!(value("(1 + 2) * 3"), 9.0);
        assert_eq!(value("2^3^2"), 512.0);
        assert_eq!(value("-2^2"), -4.0);
        assert_eq!(value("2^-1"), 0.5);
        assert_eq!(value("7 % 4"), 3.0);
        assert_eq!(value("N / 2^10"), 1024.0);
        assert_eq!(value("1_000 + 1e-6 * 0"), 1000.0);
        assert_eq!(value("2.5e3"), 2500.0);
        assert_eq!(value("max(N, 3) - min(2, 1)"), 1048575.0);
        assert_eq!(value("sqrt(16) + abs(-1) + floor(2.7) + ceil(0.2)"), 8.0);
    }

    #[test]
    fn size_parameters_name_rows_and_columns() {
        let e = SizeExpr::parse("ROWS * COLS + N").unwrap();
        assert_eq!(e.at(Size::matrix(3, 4)), 24.0);
        assert_eq!(e.at(Size::vector(5)), 5.0);
    }

    #[test]
    fn bad_expressions_say_where_and_why() {
        let e = SizeExpr::parse("12 * M").unwrap_err();
        assert_eq!(e.at, 5);
        assert!(e.to_string().contains("unknown name 'M'"), "{e}");
        let e = SizeExpr::parse("(N + 1").unwrap_err();
        assert!(e.reason.contains("')' is missing"), "{e}");
        let e = SizeExpr::parse("N +").unwrap_err();
        assert!(e.reason.contains("ends where a value"), "{e}");
        let e = SizeExpr::parse("N N").unwrap_err();
        assert!(e.reason.contains("unexpected 'N'"), "{e}");
        let e = SizeExpr::parse("pow(N, 2)").unwrap_err();
        assert!(e.reason.contains("unknown function 'pow'"), "{e}");
        let e = SizeExpr::parse("min(N)").unwrap_err();
        assert!(e.reason.contains("takes 2"), "{e}");
        let e = SizeExpr::parse("1..2").unwrap_err();
        assert!(e.reason.contains("not a number"), "{e}");
        assert!(SizeExpr::parse("").is_err());
        assert!(SizeExpr::parse("N $ 2").is_err());
    }

    #[test]
    fn nesting_and_length_are_bounded() {
        let nested = |n: usize| format!("{}N{}", "(".repeat(n), ")".repeat(n));
        // 63 parentheses and the sum inside them: 64 levels.
        assert!(SizeExpr::parse(&nested(MAX_NESTING - 1)).is_ok());
        let e = SizeExpr::parse(&nested(MAX_NESTING)).unwrap_err();
        assert!(e.reason.contains("nested more than 64 levels"), "{e}");
        let e = SizeExpr::parse(&format!("{}N", "-".repeat(100))).unwrap_err();
        assert!(e.reason.contains("nested more than"), "{e}");
        let e = SizeExpr::parse(&format!("2{}", "^2".repeat(100))).unwrap_err();
        assert!(e.reason.contains("nested more than"), "{e}");
        let e = SizeExpr::parse(&nested(10_000)).unwrap_err();
        assert!(e.to_string().len() < 200, "{e}");
        let e = SizeExpr::parse(&vec!["N"; 3000].join("+")).unwrap_err();
        assert!(e.reason.contains("longer than 4096 characters"), "{e}");
    }

    #[test]
    fn counts_are_whole_and_not_negative() {
        let size = Size::vector(10);
        assert_eq!(SizeExpr::parse("N/2").unwrap().count(size).ok(), Some(5));
        assert!(SizeExpr::parse("N/4").unwrap().count(size).is_err());
        assert!(SizeExpr::parse("1 - N").unwrap().count(size).is_err());
        assert!(SizeExpr::parse("N/0").unwrap().count(size).is_err());
    }

    #[test]
    fn names_resolve_to_the_slots_given() {
        let names = ["a", "x", "y"];
        let slot = |n: &str| names.iter().position(|m| *m == n);
        let e = Expr::parse("a * x + y", &slot).unwrap();
        assert_eq!(e.eval(&[2.0, 3.0, 1.0]), 7.0);
        assert!(e.reads(1) && !e.reads(3));
        assert!(Expr::parse("a * z", &slot).is_err());
    }
}
