//! The small value types of the LPF interface.

/// A process identifier, `lpf_pid_t`.
pub type Pid = u32;
/// Synchronisation attributes, `lpf_sync_attr_t`; only [`SYNC_DEFAULT`] is defined.
pub type SyncAttr = i32;
/// Message attributes, `lpf_msg_attr_t`; only [`MSG_DEFAULT`] is defined.
pub type MsgAttr = i32;
pub const SYNC_DEFAULT: SyncAttr = 0;
pub const MSG_DEFAULT: MsgAttr = 0;
/// Ask `exec` for as many processes as there are free processors.
pub const MAX_P: Pid = Pid::MAX;
/// The most LPF processes a job can have.
pub(crate) const MAX_PROCS: Pid = 0xffff;

/// A function symbol handed to every process of an `exec` (`lpf_func_t`).
pub type Func = unsafe extern "C" fn();

/// A registered memory area's handle, `lpf_memslot_t`.
///
/// Layout of the raw value (why: O(1) validation with stale-handle detection, and
/// identical ids for global slots on every process): bit 0 tells a global slot from a
/// local one, bits 1..32 hold the table index, bits 32..64 a generation that changes each
/// time the index is reused.
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Memslot(usize);

const _: () = assert!(usize::BITS == 64, "LPF memslot encoding needs a 64-bit target");

impl Memslot {
    /// `LPF_INVALID_MEMSLOT`.
    pub const INVALID: Memslot = Memslot(usize::MAX);

    pub(crate) fn new(global: bool, index: u32, generation: u32) -> Memslot {
        debug_assert!(index < (1 << 31));
        Memslot(((generation as usize) << 32) | ((index as usize) << 1) | global as usize)
    }
    pub fn from_raw(raw: usize) -> Memslot {
        Memslot(raw)
    }
    pub fn to_raw(self) -> usize {
        self.0
    }
    pub(crate) fn is_global(self) -> bool {
        self.0 & 1 == 1
    }
    pub(crate) fn index(self) -> usize {
        (self.0 >> 1) & 0x7fff_ffff
    }
    pub(crate) fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

impl std::fmt::Display for Memslot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if *self == Memslot::INVALID {
            return write!(f, "LPF_INVALID_MEMSLOT");
        }
        let kind = if self.is_global() { "global" } else { "local" };
        write!(f, "{kind} slot #{} (generation {})", self.index(), self.generation())
    }
}

/// Arguments of an SPMD section: input and output bytes (only pid 0 of an `exec` sees
/// the caller's; the others get empty slices) and function symbols (everyone).
pub struct Args<'a> {
    pub input: &'a [u8],
    pub output: &'a mut [u8],
    pub symbols: &'a [Func],
}

impl Args<'static> {
    /// `LPF_NO_ARGS`.
    pub fn none() -> Args<'static> {
        Args { input: &[], output: &mut [], symbols: &[] }
    }
}

impl<'a> Args<'a> {
    pub fn new(input: &'a [u8], output: &'a mut [u8]) -> Args<'a> {
        Args { input, output, symbols: &[] }
    }
    /// The args a process other than pid 0 of an `exec` receives.
    pub(crate) fn for_peer(symbols: &'a [Func]) -> Args<'a> {
        Args { input: &[], output: &mut [], symbols }
    }
}

/// Plain data that any bit pattern written by a remote put leaves valid.
///
/// # Safety
/// Implementors must have no padding, no invalid bit patterns and no pointers
/// (integers, floats, and arrays of them qualify).
pub unsafe trait Pod: Copy + Send + Sync + 'static {}

macro_rules! pod {
    // SAFETY: primitive integers and floats have no padding, pointers or invalid bit
    // patterns.
    ($($t:ty),*) => { $(unsafe impl Pod for $t {})* };
}
pod!(u8, u16, u32, u64, u128, usize, i8, i16, i32, i64, i128, isize, f32, f64);
// SAFETY: an array of Pod elements has no padding between them and no other bytes.
unsafe impl<T: Pod, const N: usize> Pod for [T; N] {}
