//! The context: the twelve primitives, with every argument checked in O(1) before
//! anything is queued, over whichever [`Engine`] runs the section.

use crate::checks::Checks;
use crate::engine::{Engine, Superstep};
use crate::error::{Error, Result};
use crate::machine::Machine;
use crate::queue::{MessageQueue, Request};
use crate::register::Register;
use crate::types::{Args, Memslot, MsgAttr, Pid, Pod, SyncAttr};
use crate::wait::Cancel;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::ptr::NonNull;

/// The C names of the calls whose misuse an [`Error`] names.
const PUT: &str = "lpf_put";
const GET: &str = "lpf_get";
use std::rc::{Rc, Weak};

/// An SPMD function: run by every process of a section with its context and args.
pub type Spmd<'f> = &'f (dyn Fn(&mut Context, Args<'_>) + Sync);

/// How `exec` from inside a section starts its processes: `(p, free_p, runtime_p,
/// spmd, args, cancel)`. On every engine they are threads of this OS process, started
/// by the shared-memory engine, which is built on this module and so cannot be named
/// from it: whoever starts a process hands the function in.
pub(crate) type NestedExec = fn(Pid, Pid, Pid, Spmd<'_>, Args<'_>, &Cancel) -> Result<()>;

/// One process's handle on a running SPMD section (`lpf_t`). Used by one thread.
pub struct Context {
    register: Rc<RefCell<Register>>,
    queue: MessageQueue,
    engine: Box<dyn Engine>,
    free_p: Pid,
    /// All processors of the runtime this context belongs to (`probe`'s p): inherited
    /// by nested sections and rehooks, so that it is the same at every depth.
    runtime_p: Pid,
    /// Set once the process failed: the error that did it.
    failure: Option<Error>,
    left: bool,
    /// The debug layer's state, when it is on ([`crate::checks`]).
    checks: Option<Checks>,
    /// What runs an `exec` from inside this section.
    nested_exec: NestedExec,
}

/// A slice lent to LPF for communication. Its memory is reachable by puts and gets
/// only while this value lives and the slot is registered; dropping it without
/// [`Context::deregister`] withdraws the memory from communication (communication
/// touching the slot then fails), though a global slot's id stays taken until it is
/// deregistered collectively.
pub struct Registered<'b, T: Pod> {
    slot: Memslot,
    ptr: NonNull<T>,
    len: usize,
    register: Weak<RefCell<Register>>,
    _buf: PhantomData<&'b mut [T]>,
}

impl<T: Pod> Registered<'_, T> {
    pub fn slot(&self) -> Memslot {
        self.slot
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The byte offset of element `i` (for put and get offsets).
    pub fn byte_offset(&self, i: usize) -> usize {
        i * std::mem::size_of::<T>()
    }
}

impl<T: Pod> Drop for Registered<'_, T> {
    fn drop(&mut self) {
        if let Some(r) = self.register.upgrade() {
            r.borrow_mut().kill(self.slot);
        }
    }
}

impl Context {
    /// A context on `engine`; `runtime_p` None: the runtime is this section's processes
    /// (a section hooked over an init).
    pub(crate) fn new(engine: Box<dyn Engine>, free_p: Pid, runtime_p: Option<Pid>, nested_exec: NestedExec) -> Context {
        let nprocs = engine.nprocs();
        Context {
            register: Rc::new(RefCell::new(Register::new(nprocs as usize))),
            queue: MessageQueue::default(),
            engine,
            free_p: free_p.max(1),
            runtime_p: runtime_p.unwrap_or(nprocs).max(nprocs),
            failure: None,
            left: false,
            checks: crate::checks::enabled().then(Checks::default),
            nested_exec,
        }
    }

    pub fn pid(&self) -> Pid {
        self.engine.pid()
    }

    pub fn nprocs(&self) -> Pid {
        self.engine.nprocs()
    }

    /// The processes that share memory with each other ("nodes"): contiguous pid ranges
    /// in pid order that cover `0..nprocs()`, the same on every process. One range
    /// `[0, p)` on the shared-memory engine, one per OS process (its threads) on the
    /// hybrid engine, `[q, q + 1)` for every q on TCP (and on any engine that does not
    /// say). Only a hint for placing work and data: every put and get works between any
    /// two processes regardless.
    pub fn nodes(&self) -> Vec<std::ops::Range<Pid>> {
        self.engine.nodes()
    }

    /// Whether this process's cancel token is set (see [`crate::Cancel`]): a long
    /// computation between syncs may look, to stop early; its next sync fails anyway.
    pub fn is_cancelled(&self) -> bool {
        self.engine.cancel().is_cancelled()
    }

    /// The engine running this section (`shm`, `tcp`, ...).
    pub fn engine_name(&self) -> &'static str {
        self.engine.name()
    }

    /// The error that put this process in the failed state, if any.
    pub fn failure(&self) -> Option<&Error> {
        self.failure.as_ref()
    }

    /// Switches the debug checks ([`crate::checks`]) off for this context, before its
    /// first sync: for a library's own sections whose processes need not all be in debug
    /// mode (a launched job's command broadcast, which tells the other processes that
    /// pid 0's program is in debug mode). Every process of the section must call it.
    pub fn without_debug_checks(&mut self) {
        self.checks = None;
    }

    /// Puts this process in the failed state when `e` is fatal (an error a layer above
    /// found in a call on this context, e.g. the C interface's check of an out-pointer)
    /// and returns `e`: as after any fatal error of a primitive, later syncs, execs and
    /// rehooks fail, and the section's `exec` or `hook` returns the error even if every
    /// process then returns from its SPMD function normally.
    pub fn enter_failed_state(&mut self, e: Error) -> Error {
        self.fail(e)
    }

    /// Enters the failed state (once) and tells the peers, so that none waits for us.
    /// Every fatal error a primitive returns goes through here (an error the context
    /// forgot would let a section of processes that all failed and returned end in
    /// success).
    fn fail(&mut self, e: Error) -> Error {
        if e.is_fatal() && self.failure.is_none() {
            self.failure = Some(e.clone());
            self.leave();
        }
        e
    }

    fn leave(&mut self) {
        if !self.left {
            self.left = true;
            self.engine.leave();
        }
    }

    fn check_alive(&self, what: &str) -> Result<()> {
        match &self.failure {
            None => Ok(()),
            Some(f) => Err(Error::with_reason(f.kind(), f.reason(), format!("{what}: this process failed earlier ({})", f.message()))),
        }
    }

    /// `lpf_resize_memory_register`: room for `max_regs` registrations (local and global
    /// together) from the next sync on. Memory is reserved now, so on
    /// `OutOfMemory` nothing changed.
    pub fn resize_memory_register(&mut self, max_regs: usize) -> Result<()> {
        let r = self.register.borrow_mut().request_capacity(max_regs);
        r.map_err(|e| self.fail(e))
    }

    /// `lpf_resize_message_queue`: room for `max_msgs` puts and gets per superstep from
    /// the next sync on (a message counts at its origin and at its target).
    pub fn resize_message_queue(&mut self, max_msgs: usize) -> Result<()> {
        let r = self.queue.request_capacity(max_msgs);
        r.map_err(|e| self.fail(e))
    }

    /// `lpf_register_global` on raw memory. Collective: every process registers in the
    /// same order in the same superstep; usable for communication after the next sync.
    ///
    /// A NULL `ptr` with a `size` above 0 is misuse (fatal).
    ///
    /// # Safety
    /// `ptr..ptr + size` must stay valid for reads and writes, and be accessed by this
    /// thread only outside `sync`, until the slot is deregistered.
    pub unsafe fn register_global_raw(&mut self, ptr: *mut u8, size: usize) -> Result<Memslot> {
        self.register_raw(true, ptr, size)
    }

    /// `lpf_register_local` on raw memory: usable at once, as the local side of puts
    /// (source) and gets (destination).
    ///
    /// A NULL `ptr` with a `size` above 0 is misuse (fatal).
    ///
    /// # Safety
    /// As for [`Context::register_global_raw`].
    pub unsafe fn register_local_raw(&mut self, ptr: *mut u8, size: usize) -> Result<Memslot> {
        self.register_raw(false, ptr, size)
    }

    fn register_raw(&mut self, global: bool, ptr: *mut u8, size: usize) -> Result<Memslot> {
        let call = if global { "lpf_register_global" } else { "lpf_register_local" };
        if ptr.is_null() && size > 0 {
            return Err(self.fail(Error::misuse(call, format!("NULL pointer with size {size}"))));
        }
        let r = self.register.borrow_mut().add(global, ptr, size);
        r.map_err(|e| {
            let e = self.overflow(call, e);
            self.fail(e)
        })
    }

    /// In debug mode, a full memory register or message queue is misuse of `call`
    /// ([`Checks::overflow`]); otherwise `e` as it is.
    fn overflow(&self, call: &'static str, e: Error) -> Error {
        match &self.checks {
            Some(c) => c.overflow(call, e),
            None => e,
        }
    }

    fn lend<'b, T: Pod>(&mut self, buf: &'b mut [T], global: bool) -> Result<Registered<'b, T>> {
        let len = buf.len();
        let ptr = NonNull::from(&mut *buf).cast::<T>();
        let bytes = std::mem::size_of_val(buf);
        let slot = self.register_raw(global, ptr.as_ptr().cast(), bytes)?;
        Ok(Registered { slot, ptr, len, register: Rc::downgrade(&self.register), _buf: PhantomData })
    }

    /// Registers a slice you own as a global slot (collective; usable after the next
    /// sync). Read and write it through [`Context::slice`] / [`Context::slice_mut`].
    pub fn register_global<'b, T: Pod>(&mut self, buf: &'b mut [T]) -> Result<Registered<'b, T>> {
        self.lend(buf, true)
    }

    /// Registers a slice you own as a local slot (usable at once).
    pub fn register_local<'b, T: Pod>(&mut self, buf: &'b mut [T]) -> Result<Registered<'b, T>> {
        self.lend(buf, false)
    }

    /// The contents of a registered slice. Borrowing the context keeps `sync`, which
    /// writes into registered memory, from running meanwhile.
    pub fn slice<'a, T: Pod>(&'a self, reg: &'a Registered<'_, T>) -> &'a [T] {
        // SAFETY: `reg` holds the unique borrow of the slice; all writes into registered
        // memory happen on this thread inside `sync`, which needs `&mut self`.
        unsafe { std::slice::from_raw_parts(reg.ptr.as_ptr(), reg.len) }
    }

    /// Mutable access to a registered slice (between syncs).
    pub fn slice_mut<'a, T: Pod>(&'a mut self, reg: &'a mut Registered<'_, T>) -> &'a mut [T] {
        // SAFETY: as in `slice`, and `&mut reg` makes this the only access.
        unsafe { std::slice::from_raw_parts_mut(reg.ptr.as_ptr(), reg.len) }
    }

    /// `lpf_deregister`: immediate; collective and in the same order for global slots.
    pub fn deregister(&mut self, slot: Memslot) -> Result<()> {
        if let Some(c) = &self.checks {
            c.deregistering(slot, &self.queue).map_err(|e| self.fail(e))?;
        }
        let r = self.register.borrow_mut().remove(slot);
        if let (Ok(()), Some(c)) = (&r, &mut self.checks) {
            c.deregistered(slot);
        }
        r.map_err(|e| self.fail(e))
    }

    /// `lpf_put`: copy `size` bytes from `src_offset` of local slot `src` into
    /// `dst_offset` of global slot `dst` at process `dst_pid`, completed by the next sync.
    /// Every argument is checked here, the remote bounds at the destination during sync;
    /// a put of 0 bytes is skipped ([`Context::skip_empty`]).
    #[allow(clippy::too_many_arguments)]
    pub fn put(
        &mut self,
        src: Memslot,
        src_offset: usize,
        dst_pid: Pid,
        dst: Memslot,
        dst_offset: usize,
        size: usize,
        attr: MsgAttr,
    ) -> Result<()> {
        if size == 0 {
            return self.skip_empty("put");
        }
        let r = self.check_msg_attr(PUT, "put", attr).and_then(|()| self.check_put(src, src_offset, dst_pid, dst, dst_offset, size));
        self.enqueue(PUT, r.map(|src_ptr| Request::Put { src: src_ptr, dst_pid, dst_slot: dst, dst_offset, size }), src)
    }

    /// Queues a checked request of `call` whose local side is slot `local`, or fails
    /// with the check's error.
    fn enqueue(&mut self, call: &'static str, checked: Result<Request>, local: Memslot) -> Result<()> {
        let r = checked.and_then(|req| self.queue.push(req)).map_err(|e| self.overflow(call, e));
        if r.is_ok() {
            self.register.borrow_mut().note_queued(local);
        }
        r.map_err(|e| self.fail(e))
    }

    fn check_put(&self, src: Memslot, src_offset: usize, dst_pid: Pid, dst: Memslot, dst_offset: usize, size: usize) -> Result<*const u8> {
        self.check_alive("put")?;
        self.check_pid(dst_pid, PUT, "put")?;
        let reg = self.register.borrow();
        let src_ptr = reg.area(src, PUT).and_then(|a| a.range(src, src_offset, size, PUT, "put source"))?;
        self.check_remote(&reg, dst, dst_pid, dst_offset, size, PUT, "put destination")?;
        Ok(src_ptr)
    }

    /// `lpf_get`: copy `size` bytes from `src_offset` of global slot `src` at process
    /// `src_pid` into `dst_offset` of local slot `dst`, completed by the next sync; a get
    /// of 0 bytes is skipped ([`Context::skip_empty`]).
    #[allow(clippy::too_many_arguments)]
    pub fn get(
        &mut self,
        src_pid: Pid,
        src: Memslot,
        src_offset: usize,
        dst: Memslot,
        dst_offset: usize,
        size: usize,
        attr: MsgAttr,
    ) -> Result<()> {
        if size == 0 {
            return self.skip_empty("get");
        }
        let r = self.check_msg_attr(GET, "get", attr).and_then(|()| self.check_get(src_pid, src, src_offset, dst, dst_offset, size));
        self.enqueue(GET, r.map(|dst_ptr| Request::Get { src_pid, src_slot: src, src_offset, dst: dst_ptr, size }), dst)
    }

    fn check_get(&self, src_pid: Pid, src: Memslot, src_offset: usize, dst: Memslot, dst_offset: usize, size: usize) -> Result<*mut u8> {
        self.check_alive("get")?;
        self.check_pid(src_pid, GET, "get")?;
        let reg = self.register.borrow();
        self.check_remote(&reg, src, src_pid, src_offset, size, GET, "get source")?;
        reg.area(dst, GET).and_then(|a| a.range(dst, dst_offset, size, GET, "get destination"))
    }

    /// A put or get of 0 bytes moves nothing, so it is skipped whatever pid, slots and
    /// offsets it names, and takes no room in the queue: libraries send such requests for
    /// empty blocks (e.g. `LPF_INVALID_MEMSLOT` for an empty vector), and the reference
    /// implementation skips them too. Only a process that already failed still says so.
    fn skip_empty(&self, what: &str) -> Result<()> {
        self.check_alive(what)
    }

    /// In debug mode, only the default message attribute is accepted.
    fn check_msg_attr(&self, call: &'static str, what: &str, attr: MsgAttr) -> Result<()> {
        self.checks.as_ref().map_or(Ok(()), |c| c.msg_attr(call, what, attr))
    }

    fn check_pid(&self, pid: Pid, call: &'static str, what: &str) -> Result<()> {
        if pid >= self.nprocs() {
            return Err(Error::misuse(call, format!("{what}: pid {pid} is not below nprocs {}", self.nprocs())));
        }
        Ok(())
    }

    /// The remote side of a put or get must be a global slot, known here (global ids are
    /// the same everywhere), usable in this superstep, and hold the range at `pid`.
    #[allow(clippy::too_many_arguments)]
    fn check_remote(&self, reg: &Register, slot: Memslot, pid: Pid, offset: usize, size: usize, call: &'static str, what: &str) -> Result<()> {
        if !slot.is_global() && slot != Memslot::INVALID {
            return Err(Error::misuse(call, format!("{what}: {slot} is local; remote areas must be global slots")));
        }
        let area = reg.remote_area(slot, pid, call).map_err(|e| e.context(what))?;
        area.range(slot, offset, size, call, format_args!("{what} at process {pid}")).map(|_| ())
    }

    /// `lpf_sync`: ends the superstep; all puts and gets are complete when it returns.
    pub fn sync(&mut self, attr: SyncAttr) -> Result<()> {
        self.check_alive("sync")?;
        // A cancelled process fails here even if its peers would not keep it waiting
        // (its waits look at the token only when they pause).
        if let Err(e) = self.engine.cancel().check() {
            let pid = self.pid();
            return Err(self.fail(e.context(format_args!("sync on process {pid}"))));
        }
        let nprocs = self.nprocs();
        self.queue.group_by_peer(nprocs);
        let result = (|| {
            let register = self.register.borrow();
            if let Some(c) = &mut self.checks {
                c.sync_attr(attr)?;
                c.at_sync(&mut *self.engine, &register, &self.queue)?;
            }
            if let Some(slot) = register.released_while_queued() {
                return Err(Error::misuse("lpf_sync", format!(
                    "sync: the memory of {slot} was released (its Registered dropped) while a put or get queued in this superstep names it"
                )));
            }
            // Global slots registered in this superstep: learn every process's sizes.
            let mine = register.pending_sizes();
            let mut all_sizes = vec![0u64; mine.len() * nprocs as usize];
            if !mine.is_empty() {
                self.engine.activate(&register, &mine, &mut all_sizes)?;
            }
            self.engine.sync(&Superstep { register: &register, queue: &self.queue }, attr)?;
            Ok(all_sizes)
        })();
        let all_sizes = result.map_err(|e| self.fail(e))?;
        self.register.borrow_mut().on_sync(&all_sizes);
        self.queue.on_sync();
        Ok(())
    }

    /// `lpf_probe`: p (the processors of the whole runtime, not of this section: the
    /// same as the root's and at any nesting depth), free_p, and the cost functions g and
    /// l of the engine running this section.
    pub fn probe(&self) -> Result<Machine> {
        Ok(Machine::new(self.runtime_p, self.free_p, self.engine.name()))
    }

    /// `lpf_exec` from inside a section: runs `spmd` on `min(p, free_p)` new processes
    /// (threads of this one; pid 0 is this thread), this context on hold meanwhile.
    pub fn exec(&mut self, p: Pid, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
        self.check_alive("exec")?;
        (self.nested_exec)(p, self.free_p, self.runtime_p, spmd, args, self.engine.cancel())
    }

    /// `lpf_rehook`: collective; runs `spmd` over the same processes in a fresh context
    /// with empty register and queue, this one on hold meanwhile.
    pub fn rehook(&mut self, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
        self.check_alive("rehook")?;
        let engine = match self.engine.fresh() {
            Ok(e) => e,
            Err(e) => return Err(self.fail(e)),
        };
        run_process_in(engine, self.free_p, Some(self.runtime_p), self.nested_exec, spmd, args)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        self.leave();
    }
}

/// Runs one process of a section: builds its context, calls `spmd`, and says how it
/// ended. A panic in `spmd` is caught here (it never crosses into C or another thread)
/// and makes the process fail, so that its peers are released.
pub(crate) fn run_process(engine: Box<dyn Engine>, free_p: Pid, nested_exec: NestedExec, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
    run_process_in(engine, free_p, None, nested_exec, spmd, args)
}

/// [`run_process`] for a section on the first `engine.nprocs()` LPF processes of a job
/// of `job_p` (a root `lpf_exec` asking for fewer than the job has): `lpf_probe` gives
/// the job's p, and the job's processes are shared out as the section's free_p (the
/// processes a nested exec may use), as the reference does: each process gets
/// `job_p / p`, the first `job_p % p` one more, so that they add up to `job_p`.
pub(crate) fn run_part_process(engine: Box<dyn Engine>, job_p: Pid, nested_exec: NestedExec, spmd: Spmd<'_>, args: Args<'_>) -> Result<()> {
    let (pid, p) = (engine.pid(), engine.nprocs().max(1));
    let free_p = job_p / p + Pid::from(pid < job_p % p);
    run_process_in(engine, free_p, Some(job_p), nested_exec, spmd, args)
}

/// [`run_process`] in a runtime of `runtime_p` processors (None: the section's own).
pub(crate) fn run_process_in(
    engine: Box<dyn Engine>,
    free_p: Pid,
    runtime_p: Option<Pid>,
    nested_exec: NestedExec,
    spmd: Spmd<'_>,
    args: Args<'_>,
) -> Result<()> {
    let mut ctx = Context::new(engine, free_p, runtime_p, nested_exec);
    let pid = ctx.pid();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| spmd(&mut ctx, args)));
    let result = match (outcome, ctx.failure.take()) {
        (Err(panic), _) => Err(Error::fatal(format!("process {pid} panicked: {}", panic_message(&panic)))),
        (Ok(()), Some(failure)) => Err(failure),
        (Ok(()), None) => ctx.engine.finish(),
    };
    drop(ctx);
    result
}

pub(crate) fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    let text = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
    text.unwrap_or_else(|| "(non-string panic payload)".to_string())
}
