//! Algebraic structures: scalars, binary operators, monoids and semirings.
//!
//! GraphBLAS expresses graph algorithms as linear algebra over *semirings*
//! other than the usual (+, ×): e.g. (min, +) gives shortest paths and
//! (∨, ∧) gives reachability. Operators are zero-sized unit structs so that
//! kernels are monomorphised and the inner loops compile to the same code as
//! hand-written ones (no dynamic dispatch per nonzero).

use std::fmt::Debug;

/// A value that can be stored in a [`crate::Matrix`] or [`crate::Vector`].
///
/// `zero`/`one`/`plus` are only the *default* notions used when building
/// matrices (summing duplicates, the implicit value of pattern entries); the
/// algebra used by operations always comes from an explicit semiring/monoid.
pub trait Scalar: Copy + Send + Sync + PartialEq + Debug + 'static {
    /// Additive identity of the natural arithmetic (`false` for `bool`).
    fn zero() -> Self;
    /// Multiplicative identity (`true` for `bool`); the value of pattern entries.
    fn one() -> Self;
    /// Natural addition, used by the `Sum` duplicate policy (`or` for `bool`).
    fn plus(a: Self, b: Self) -> Self;
    /// The smaller of two values, used by the `Min` duplicate policy (`and` for `bool`).
    fn smaller(a: Self, b: Self) -> Self;
    /// Whether a stored value counts as "true" in a value mask.
    fn is_truthy(self) -> bool {
        self != Self::zero()
    }
}

/// Ordered numeric scalars: what plus/times/min/max need.
pub(crate) trait Number: Scalar + PartialOrd {
    /// Multiplication.
    fn times(a: Self, b: Self) -> Self;
    /// Largest value (`+inf` for floats): identity of `Min`.
    fn max_value() -> Self;
    /// Smallest value (`-inf` for floats): identity of `Max`.
    fn min_value() -> Self;
}

macro_rules! impl_int {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            #[inline] fn zero() -> Self { 0 }
            #[inline] fn one() -> Self { 1 }
            #[inline] fn plus(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline] fn smaller(a: Self, b: Self) -> Self { a.min(b) }
        }
        impl Number for $t {
            #[inline] fn times(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            #[inline] fn max_value() -> Self { <$t>::MAX }
            #[inline] fn min_value() -> Self { <$t>::MIN }
        }
    )*};
}
impl_int!(i32, i64, u32, u64, usize);

macro_rules! impl_float {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            #[inline] fn zero() -> Self { 0.0 }
            #[inline] fn one() -> Self { 1.0 }
            #[inline] fn plus(a: Self, b: Self) -> Self { a + b }
            #[inline] fn smaller(a: Self, b: Self) -> Self { a.min(b) }
        }
        impl Number for $t {
            #[inline] fn times(a: Self, b: Self) -> Self { a * b }
            #[inline] fn max_value() -> Self { <$t>::INFINITY }
            #[inline] fn min_value() -> Self { <$t>::NEG_INFINITY }
        }
    )*};
}
impl_float!(f32, f64);

impl Scalar for bool {
    #[inline]
    fn zero() -> Self {
        false
    }
    #[inline]
    fn one() -> Self {
        true
    }
    #[inline]
    fn smaller(a: Self, b: Self) -> Self {
        a & b
    }
    #[inline]
    fn plus(a: Self, b: Self) -> Self {
        a | b
    }
}

/// A binary operator `T × T → T` (GrB_BinaryOp restricted to one domain).
pub trait BinaryOp<T>: Copy + Send + Sync {
    /// Applies the operator.
    fn apply(&self, a: T, b: T) -> T;
}

/// An associative, commutative binary operator with an identity (GrB_Monoid).
pub trait Monoid<T>: BinaryOp<T> {
    /// The identity element: `op(identity, x) == x`.
    fn identity(&self) -> T;
    /// Whether `x` is a terminal (annihilating) value: `op(x, y) == x` for every `y`
    /// (`true` for ∨, the smallest value for min, every value for `Any`). A reduction
    /// that reaches it may stop: this is what ends a pull BFS row at its first parent.
    #[inline]
    fn is_terminal(&self, _x: T) -> bool {
        false
    }
}

/// A semiring (GrB_Semiring): an additive monoid plus a multiplicative
/// operator. `zero` is the additive identity, used as the start of each dot
/// product.
pub trait Semiring<T>: Copy + Send + Sync {
    /// Additive identity.
    fn zero(&self) -> T;
    /// Additive monoid operation.
    fn add(&self, a: T, b: T) -> T;
    /// Multiplicative operator; `a` is the left operand (matrix entry in
    /// `mxv`, vector entry in `vxm`).
    fn mul(&self, a: T, b: T) -> T;
    /// Whether the additive monoid cannot move away from `x` ([`Monoid::is_terminal`]).
    #[inline]
    fn is_terminal(&self, _x: T) -> bool {
        false
    }
}

/// `a + b`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Plus;
/// `a * b`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Times;
/// `min(a, b)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Min;
/// `max(a, b)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Max;
/// `a` (ignores the second operand; useful for pattern matrices).
#[derive(Clone, Copy, Debug, Default)]
pub struct First;
/// `b` (ignores the first operand).
#[derive(Clone, Copy, Debug, Default)]
pub struct Second;
/// Logical or (`bool` only).
#[derive(Clone, Copy, Debug, Default)]
pub struct LOr;
/// `any(a, b)`: either operand (GxB_ANY; here the first). As a monoid every value is
/// terminal, so a reduction stops at its first entry: for when any witness will do
/// (BFS reachability).
#[derive(Clone, Copy, Debug, Default)]
pub struct Any;
/// `pair(a, b) = 1` (GxB_PAIR / GrB_ONEB): only the presence of both operands matters.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pair;
/// Logical and (`bool` only).
#[derive(Clone, Copy, Debug, Default)]
pub struct LAnd;

impl<T: Number> BinaryOp<T> for Plus {
    #[inline]
    fn apply(&self, a: T, b: T) -> T {
        T::plus(a, b)
    }
}
impl<T: Number> Monoid<T> for Plus {
    #[inline]
    fn identity(&self) -> T {
        T::zero()
    }
}
impl<T: Number> BinaryOp<T> for Times {
    #[inline]
    fn apply(&self, a: T, b: T) -> T {
        T::times(a, b)
    }
}
impl<T: Number> Monoid<T> for Times {
    #[inline]
    fn identity(&self) -> T {
        T::one()
    }
}
impl<T: Number> BinaryOp<T> for Min {
    #[inline]
    fn apply(&self, a: T, b: T) -> T {
        if b < a {
            b
        } else {
            a
        }
    }
}
impl<T: Number> Monoid<T> for Min {
    #[inline]
    fn identity(&self) -> T {
        T::max_value()
    }
    #[inline]
    fn is_terminal(&self, x: T) -> bool {
        x == T::min_value()
    }
}
impl<T: Number> BinaryOp<T> for Max {
    #[inline]
    fn apply(&self, a: T, b: T) -> T {
        if b > a {
            b
        } else {
            a
        }
    }
}
impl<T: Number> Monoid<T> for Max {
    #[inline]
    fn identity(&self) -> T {
        T::min_value()
    }
    #[inline]
    fn is_terminal(&self, x: T) -> bool {
        x == T::max_value()
    }
}
impl<T: Scalar> BinaryOp<T> for First {
    #[inline]
    fn apply(&self, a: T, _b: T) -> T {
        a
    }
}
impl<T: Scalar> BinaryOp<T> for Second {
    #[inline]
    fn apply(&self, _a: T, b: T) -> T {
        b
    }
}
impl BinaryOp<bool> for LOr {
    #[inline]
    fn apply(&self, a: bool, b: bool) -> bool {
        a | b
    }
}
impl Monoid<bool> for LOr {
    #[inline]
    fn identity(&self) -> bool {
        false
    }
    #[inline]
    fn is_terminal(&self, x: bool) -> bool {
        x
    }
}
impl BinaryOp<bool> for LAnd {
    #[inline]
    fn apply(&self, a: bool, b: bool) -> bool {
        a & b
    }
}
impl Monoid<bool> for LAnd {
    #[inline]
    fn identity(&self) -> bool {
        true
    }
    #[inline]
    fn is_terminal(&self, x: bool) -> bool {
        !x
    }
}
impl<T: Scalar> BinaryOp<T> for Any {
    #[inline]
    fn apply(&self, a: T, _b: T) -> T {
        a
    }
}
impl<T: Scalar> Monoid<T> for Any {
    /// `Any` has no true identity; reductions never return it for a non-empty input
    /// (every value is terminal).
    #[inline]
    fn identity(&self) -> T {
        T::zero()
    }
    #[inline]
    fn is_terminal(&self, _x: T) -> bool {
        true
    }
}
impl<T: Scalar> BinaryOp<T> for Pair {
    #[inline]
    fn apply(&self, _a: T, _b: T) -> T {
        T::one()
    }
}

/// A semiring assembled from an additive monoid `A` and a multiplicative
/// operator `M`, e.g. `SemiringOf<Min, Plus>` is the tropical semiring.
#[derive(Clone, Copy, Debug, Default)]
pub struct SemiringOf<A, M> {
    /// Additive monoid.
    pub(crate) add: A,
    /// Multiplicative operator.
    pub(crate) mul: M,
}

impl<T, A: Monoid<T>, M: BinaryOp<T>> Semiring<T> for SemiringOf<A, M> {
    #[inline]
    fn zero(&self) -> T {
        self.add.identity()
    }
    #[inline]
    fn add(&self, a: T, b: T) -> T {
        self.add.apply(a, b)
    }
    #[inline]
    fn mul(&self, a: T, b: T) -> T {
        self.mul.apply(a, b)
    }
    #[inline]
    fn is_terminal(&self, x: T) -> bool {
        self.add.is_terminal(x)
    }
}

/// Conventional arithmetic (+, ×).
pub type PlusTimes = SemiringOf<Plus, Times>;
/// (+, second): sums the vector entries selected by the matrix pattern in
/// `mxv` (the matrix value is ignored).
pub type PlusSecond = SemiringOf<Plus, Second>;
/// (+, first): in `vxm` sums the vector entries selected by the pattern.
pub type PlusFirst = SemiringOf<Plus, First>;
/// Tropical (min, +): one relaxation step of shortest paths.
pub type MinPlus = SemiringOf<Min, Plus>;
/// (max, ×).
pub type MaxTimes = SemiringOf<Max, Times>;
/// (min, second): e.g. minimum label propagation.
pub type MinSecond = SemiringOf<Min, Second>;
/// Boolean (∨, ∧): one BFS/reachability step.
pub type LorLand = SemiringOf<LOr, LAnd>;
/// (any, pair): structural reachability, GxB_ANY_PAIR: an output entry exists iff some
/// product exists, its value is one, and a pull row stops at its first hit.
pub type AnyPair = SemiringOf<Any, Pair>;

/// (+, pair): counts the products that exist (GxB_PLUS_PAIR): masked by a pattern,
/// the product of two patterns counts the paths of length two, i.e. triangles.
pub type PlusPair = SemiringOf<Plus, Pair>;

/// The (+, pair) semiring value.
pub const PLUS_PAIR: PlusPair = SemiringOf { add: Plus, mul: Pair };
/// The (+, ×) semiring value.
pub const PLUS_TIMES: PlusTimes = SemiringOf { add: Plus, mul: Times };
/// The (+, second) semiring value.
pub const PLUS_SECOND: PlusSecond = SemiringOf { add: Plus, mul: Second };
/// The (+, first) semiring value.
pub const PLUS_FIRST: PlusFirst = SemiringOf { add: Plus, mul: First };
/// The (min, +) semiring value.
pub const MIN_PLUS: MinPlus = SemiringOf { add: Min, mul: Plus };
/// The (max, ×) semiring value.
pub const MAX_TIMES: MaxTimes = SemiringOf { add: Max, mul: Times };
/// The (min, second) semiring value.
pub const MIN_SECOND: MinSecond = SemiringOf { add: Min, mul: Second };
/// The (∨, ∧) semiring value.
pub const LOR_LAND: LorLand = SemiringOf { add: LOr, mul: LAnd };
/// The (any, pair) semiring value.
pub const ANY_PAIR: AnyPair = SemiringOf { add: Any, mul: Pair };

/// Typecast of a stored value into an operation's domain (GraphBLAS casts a matrix's
/// values to the semiring's type): numbers as by `as`, `bool` to 0/1 and back by
/// `!= 0`. Lets a pattern matrix of `bool` (one byte per edge) drive a `u32`
/// min-label propagation or an `i64` traversal without a copy in that type.
pub trait Cast<T>: Scalar {
    /// The value in domain `T`.
    fn cast(self) -> T;
}

macro_rules! cast_numbers {
    ($($from:ty),*) => {$(
        cast_numbers!(@to $from; i32, i64, u32, u64, usize, f32, f64);
        impl Cast<bool> for $from {
            #[inline] fn cast(self) -> bool { self != (0 as $from) }
        }
        impl Cast<$from> for bool {
            #[inline] fn cast(self) -> $from { self as u8 as $from }
        }
    )*};
    (@to $from:ty; $($to:ty),*) => {$(
        impl Cast<$to> for $from {
            #[inline] fn cast(self) -> $to { self as $to }
        }
    )*};
}
cast_numbers!(i32, i64, u32, u64, usize, f32, f64);
impl Cast<bool> for bool {
    #[inline]
    fn cast(self) -> bool {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monoid_identities() {
        for x in [-3.5f64, 0.0, 2.0] {
            assert_eq!(Plus.apply(Monoid::<f64>::identity(&Plus), x), x);
            assert_eq!(Times.apply(Monoid::<f64>::identity(&Times), x), x);
            assert_eq!(Min.apply(Monoid::<f64>::identity(&Min), x), x);
            assert_eq!(Max.apply(Monoid::<f64>::identity(&Max), x), x);
        }
        for x in [i64::MIN, -1, 0, 7, i64::MAX] {
            assert_eq!(Min.apply(Monoid::<i64>::identity(&Min), x), x);
            assert_eq!(Max.apply(Monoid::<i64>::identity(&Max), x), x);
        }
        for x in [false, true] {
            assert_eq!(LOr.apply(LOr.identity(), x), x);
            assert_eq!(LAnd.apply(LAnd.identity(), x), x);
        }
    }

    #[test]
    fn semiring_operations() {
        assert_eq!(PLUS_TIMES.mul(3i64, 4), 12);
        assert_eq!(PLUS_TIMES.add(3i64, 4), 7);
        assert_eq!(Semiring::<i64>::zero(&PLUS_TIMES), 0);
        assert_eq!(MIN_PLUS.mul(3.0f64, 4.0), 7.0);
        assert_eq!(MIN_PLUS.add(3.0f64, 4.0), 3.0);
        assert_eq!(Semiring::<f64>::zero(&MIN_PLUS), f64::INFINITY);
        assert_eq!(PLUS_FIRST.mul(3i32, 9), 3);
        assert_eq!(PLUS_SECOND.mul(3i32, 9), 9);
        assert_eq!(MAX_TIMES.add(-2i32, 5), 5);
        assert_eq!(MIN_SECOND.mul(1u32, 8), 8);
        assert!(LOR_LAND.add(false, true));
        assert!(!LOR_LAND.mul(false, true));
        assert!(!LOR_LAND.zero());
    }

    #[test]
    fn terminal_values_and_casts() {
        assert!(Monoid::<u32>::is_terminal(&Min, 0));
        assert!(!Monoid::<u32>::is_terminal(&Min, 1));
        assert!(Monoid::<i64>::is_terminal(&Max, i64::MAX));
        assert!(LOr.is_terminal(true) && !LOr.is_terminal(false));
        assert!(Monoid::<f64>::is_terminal(&Any, 2.5));
        assert!(!Monoid::<f64>::is_terminal(&Plus, 0.0));
        assert!(ANY_PAIR.is_terminal(true) && MIN_SECOND.is_terminal(0u32) && !MIN_SECOND.is_terminal(3u32));
        assert_eq!(ANY_PAIR.mul(7i64, 9), 1);
        assert_eq!(Cast::<u32>::cast(true), 1);
        assert_eq!(Cast::<f64>::cast(false), 0.0);
        assert!(Cast::<bool>::cast(-2i64));
        assert_eq!(Cast::<i32>::cast(3.9f64), 3);
    }

    #[test]
    fn scalar_defaults() {
        assert!(bool::plus(true, false));
        assert_eq!(f64::plus(1.5, 2.0), 3.5);
        assert!(!0.0f64.is_truthy());
        assert!((-1i32).is_truthy());
    }
}
