//! The collective verdict steps the bundled algorithms share: every process contributes
//! one word and learns everyone's, and the agreement on their requests built on it. Below
//! the algorithms and the registry that names them (`algorithms`), so that both import it.

use lpf::{Context, MSG_DEFAULT, SYNC_DEFAULT};

pub(crate) fn lpf(e: lpf::Error) -> String {
    e.to_string()
}

/// Every process contributes one word and learns everyone's (by pid): the collective
/// verdict step of the algorithms. Leaves the register with room for `slots` slots and
/// the queue for `msgs` messages, and nothing registered.
pub(crate) fn exchange_words(ctx: &mut Context, word: u64, slots: usize, msgs: usize) -> Result<Vec<u64>, String> {
    let p = ctx.nprocs() as usize;
    ctx.resize_memory_register(slots.max(2)).map_err(lpf)?;
    ctx.resize_message_queue(msgs.max(2 * p)).map_err(lpf)?;
    ctx.sync(SYNC_DEFAULT).map_err(lpf)?;
    let mut mine = [word];
    let mut all = vec![0u64; p];
    let src = ctx.register_local(&mut mine).map_err(lpf)?;
    let dst = ctx.register_global(&mut all).map_err(lpf)?;
    ctx.sync(SYNC_DEFAULT).map_err(lpf)?;
    let pid = ctx.pid() as usize;
    for q in 0..p {
        ctx.put(src.slot(), 0, q as u32, dst.slot(), dst.byte_offset(pid), 8, MSG_DEFAULT).map_err(lpf)?;
    }
    ctx.sync(SYNC_DEFAULT).map_err(lpf)?;
    let sizes = ctx.slice(&dst).to_vec();
    ctx.deregister(src.slot()).map_err(lpf)?;
    ctx.deregister(dst.slot()).map_err(lpf)?;
    Ok(sizes)
}

/// The collective check of a bundled algorithm's requests: every process learns whether
/// every request parsed and whether their agreed parts (`digest`: a hash with the top
/// bit clear) are equal, and all return the same verdict: the request, or the parse
/// error (its own on the failing process, a pointer to it elsewhere), or which process
/// differs in `agreed` (the fields named in the message).
pub(crate) fn agree_on_request<R>(
    ctx: &mut Context,
    parsed: Result<R, String>,
    digest: impl Fn(&R) -> u64,
    agreed: &str,
) -> Result<R, String> {
    /// Marks a process whose request did not parse (digests have the top bit clear).
    const BAD: u64 = u64::MAX;
    let word = parsed.as_ref().map_or(BAD, digest);
    let words = exchange_words(ctx, word, 2, 2)?;
    if let Some(q) = words.iter().position(|&w| w == BAD) {
        return Err(match parsed {
            Err(m) if q == ctx.pid() as usize => format!("bad request: {m}"),
            _ => format!("the request of process {q} does not parse (its own error says why)"),
        });
    }
    if let Some(q) = words.iter().position(|&w| w != words[0]) {
        return Err(format!(
            "the parameters ({agreed}) of process {q} differ from process 0's; only the edges may differ between processes"
        ));
    }
    parsed
}
