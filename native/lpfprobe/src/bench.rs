//! Measuring an engine's BSP parameters g and l the way the LPF paper does, inside any
//! running [`Context`] (so every engine, and the `lpfprobe` tool, use the same code).
//!
//! **Total exchange.** In a superstep of size n (in words of w bytes) every process
//! sends n words, one put per word, spread evenly over the other p - 1 processes (to
//! itself when p = 1), and so receives n words: an h-relation with h = n words. T(n)
//! is the time of such a superstep, the puts' issue included, averaged over many
//! supersteps. With T(n) ≈ l + n·g_w:
//!
//! * g_w = (T(n_max) - T(2p)) / (n_max - 2p) seconds per word, reported per byte
//!   (g = g_w / w); n_max makes the data moved per superstep, over all processes, at
//!   least [`BenchConfig::total_bytes`] (four times the last-level cache or more, so
//!   that it measures memory, not cache);
//! * l = max{T(0), 2T(p) - T(2p)} (the intercept of the line through T(p) and T(2p),
//!   but never below the cost of an empty superstep).
//!
//! Each of T(0), T(p), T(2p), T(n_max) is sampled [`BenchConfig::samples`] times,
//! interleaved, each sample the mean of enough supersteps to last
//! [`BenchConfig::sample_time`] (process 0 decides the count and tells the others, so
//! everybody runs the same supersteps). g and l are computed per sample and reported
//! with 95% confidence intervals (Student's t). Process 0's clock is used; a sync
//! cannot end on one process before every process has reached it, so its time covers
//! everyone's work.

use lpf::{Context, CostPoint, Error, Memslot, Pid, Result, MSG_DEFAULT, SYNC_DEFAULT};
use std::time::Instant;

/// What to measure and how long to spend on it.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Word (message) sizes in bytes.
    pub word_sizes: Vec<usize>,
    /// Bytes moved per superstep over all processes at n_max.
    pub total_bytes: usize,
    /// Samples per measured point.
    pub samples: usize,
    /// Seconds each sample should last (at least one superstep).
    pub sample_time: f64,
}

/// The word sizes of the LPF paper's table: 8 B, 64 B, 1 KiB, 1 MiB.
pub const WORD_SIZES: [usize; 4] = [8, 64, 1024, 1 << 20];

impl BenchConfig {
    /// The full measurement: 128 MiB per superstep (four times a 32 MiB last-level
    /// cache), 20 samples of 30 ms (about 25 s at p = 4 on two cores).
    pub fn full() -> BenchConfig {
        BenchConfig { word_sizes: WORD_SIZES.to_vec(), total_bytes: 128 << 20, samples: 20, sample_time: 0.03 }
    }
    /// A fast, rough run (seconds, even in a debug build): 1 MiB per superstep,
    /// 3 samples of 2 ms.
    pub fn quick() -> BenchConfig {
        BenchConfig { word_sizes: WORD_SIZES.to_vec(), total_bytes: 1 << 20, samples: 3, sample_time: 0.002 }
    }
}

/// A sample mean and the half-width of its 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    pub ci95: f64,
}

impl Estimate {
    pub fn from_samples(xs: &[f64]) -> Estimate {
        let n = xs.len();
        if n == 0 {
            return Estimate { mean: f64::NAN, ci95: f64::NAN };
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        if n == 1 {
            return Estimate { mean, ci95: f64::INFINITY };
        }
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        Estimate { mean, ci95: student_t975(n - 1) * (var / n as f64).sqrt() }
    }
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom.
fn student_t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        31..=60 => 2.000,
        61..=120 => 1.980,
        _ => 1.960,
    }
}

/// The measurement for one word size.
#[derive(Clone, Debug, PartialEq)]
pub struct WordResult {
    /// Word size w in bytes.
    pub word: usize,
    /// n_max in words per process.
    pub n_max: usize,
    /// Seconds per byte of an h-relation.
    pub g: Estimate,
    /// Seconds per superstep.
    pub l: Estimate,
    /// T(0), T(p), T(2p), T(n_max) in seconds per superstep.
    pub t: [Estimate; 4],
    /// Supersteps timed per sample for each of the four points.
    pub reps: [u64; 4],
}

/// What [`measure`] found, the same on every process.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    pub engine: &'static str,
    pub nprocs: Pid,
    pub samples: usize,
    pub total_bytes: usize,
    pub words: Vec<WordResult>,
}

impl Report {
    /// The rows of this run for a cost table (`CostTable::new`): g and l at each word
    /// size, made positive (a cost table holds only positive values) if noise drove a
    /// mean to zero or below.
    pub fn cost_points(&self) -> Vec<CostPoint> {
        self.words
            .iter()
            .map(|w| CostPoint {
                nprocs: self.nprocs,
                msg_size: w.word,
                g: if w.g.mean > 0.0 { w.g.mean } else { 1e-13 },
                l: if w.l.mean > 0.0 { w.l.mean } else { 1e-9 },
            })
            .collect()
    }

    /// The table in the layout of the LPF paper's Table 3: per word size, g and l
    /// normalised to the memcpy speed `r` (bytes/s, of 1 MiB blocks) and in seconds.
    /// `r_stream`, if given, is a second memcpy speed (1 MiB blocks streamed through a
    /// buffer larger than the cache) to which g is also normalised.
    pub fn table(&self, r: Estimate, r_stream: Option<Estimate>) -> String {
        let mut s = String::new();
        let per = self.total_bytes as f64 / self.nprocs as f64;
        s += &format!(
            "LPF probe: engine `{}`, p = {}, total exchange of {:.0} MiB per superstep ({:.1} MiB per process) at n_max, \
             {} samples per point, ± = 95% confidence interval\n",
            self.engine,
            self.nprocs,
            self.total_bytes as f64 / (1 << 20) as f64,
            per / (1 << 20) as f64,
            self.samples
        );
        s += &format!("memcpy r   = {:.2} ± {:.2} GB/s (1 MiB blocks, in cache)\n", r.mean / 1e9, r.ci95 / 1e9);
        if let Some(rs) = r_stream {
            s += &format!(
                "memcpy r_s = {:.2} ± {:.2} GB/s (1 MiB blocks streamed through a buffer larger than the cache)\n",
                rs.mean / 1e9,
                rs.ci95 / 1e9
            );
        }
        s += "normalisation: g·r = g [s/byte] × r [bytes/s] (1 = as fast as memcpy); l·r/w = l [s] × r / w, l in\n";
        s += "w-byte words memcpy copies meanwhile; g·r_s as g·r with the streaming memcpy speed.\n";
        s += &format!(
            "{:>8} | {:>17} | {:>21} | {:>7} | {:>21} | {:>21}\n",
            "w [B]", "g·r", "l·r/w", "g·r_s", "g [s/byte]", "l [s]"
        );
        s += &format!("{}\n", "-".repeat(8 + 17 + 21 + 7 + 21 + 21 + 15));
        for w in &self.words {
            let gr = Estimate { mean: w.g.mean * r.mean, ci95: w.g.ci95 * r.mean };
            let lr = Estimate { mean: w.l.mean * r.mean / w.word as f64, ci95: w.l.ci95 * r.mean / w.word as f64 };
            let grs = r_stream.map_or("-".to_string(), |rs| format!("{:.2}", w.g.mean * rs.mean));
            s += &format!(
                "{:>8} | {:>17} | {:>21} | {:>7} | {:>21} | {:>21}\n",
                w.word,
                pm(gr, 2),
                pm(lr, 3),
                grs,
                pm_e(w.g),
                pm_e(w.l)
            );
        }
        s
    }
}

fn pm(e: Estimate, digits: usize) -> String {
    format!("{:.*} ± {:.*}", digits, e.mean, digits, e.ci95)
}

fn pm_e(e: Estimate) -> String {
    format!("{:.3e} ± {:.1e}", e.mean, e.ci95)
}

/// The speed of memcpy (`copy_nonoverlapping`) in bytes per second for blocks of
/// `block` bytes: the same block copied over and over (`span` = `block`: in cache), or
/// consecutive blocks of a `span`-byte buffer into another (larger than the cache: at
/// memory speed). `samples` samples of about `sample_time` seconds each.
pub fn memcpy_speed(block: usize, span: usize, samples: usize, sample_time: f64) -> Estimate {
    let block = block.max(1);
    let span = span.max(block) / block * block;
    let src: Vec<u8> = (0..span).map(|i| i as u8).collect();
    let mut dst = vec![0u8; span];
    let blocks = span / block;
    let mut next = 0usize;
    let mut copy = |count: usize| {
        for _ in 0..count {
            let off = next * block;
            // SAFETY: two distinct buffers, `off + block <= span` for both.
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr().add(off), dst.as_mut_ptr().add(off), block) };
            next = (next + 1) % blocks;
        }
        std::hint::black_box(&mut dst);
    };
    // Warm up (page faults, caches) and calibrate.
    copy(blocks);
    let t = Instant::now();
    copy(blocks);
    let per_block = t.elapsed().as_secs_f64() / blocks as f64;
    let count = ((sample_time / per_block.max(1e-9)).ceil() as usize).max(blocks.min(16)).max(1);
    let rates: Vec<f64> = (0..samples.max(2))
        .map(|_| {
            let t = Instant::now();
            copy(count);
            (count * block) as f64 / t.elapsed().as_secs_f64()
        })
        .collect();
    Estimate::from_samples(&rates)
}

/// Memory slots [`measure`] uses.
pub const MEMORY_SLOTS: usize = 4;

/// Buffers of one word size: send (local slot), receive (global slot).
struct Exchange {
    p: usize,
    me: usize,
    w: usize,
    /// Words per source segment of the receive buffer.
    seg: usize,
    send: Memslot,
    recv: Memslot,
}

impl Exchange {
    /// Queues one total exchange of `n` words per process.
    fn issue(&self, ctx: &mut Context, n: usize) -> Result<()> {
        let (p, me, w) = (self.p, self.me, self.w);
        if p == 1 {
            for j in 0..n {
                ctx.put(self.send, j * w, 0, self.recv, j * w, w, MSG_DEFAULT)?;
            }
            return Ok(());
        }
        let others = p - 1;
        let mut src = 0;
        for d in 0..others {
            let dest = (me + 1 + d) % p;
            let count = n / others + usize::from(d < n % others);
            let base = me * self.seg;
            for k in 0..count {
                ctx.put(self.send, (src + k) * w, dest as Pid, self.recv, (base + k) * w, w, MSG_DEFAULT)?;
            }
            src += count;
        }
        Ok(())
    }

    /// Mean seconds per superstep of `reps` supersteps of `n` words each.
    fn time(&self, ctx: &mut Context, n: usize, reps: u64) -> Result<f64> {
        ctx.sync(SYNC_DEFAULT)?;
        let t = Instant::now();
        for _ in 0..reps {
            self.issue(ctx, n)?;
            ctx.sync(SYNC_DEFAULT)?;
        }
        Ok(t.elapsed().as_secs_f64() / reps as f64)
    }
}

/// A small global buffer through which process 0 tells the others values.
struct Control {
    me: usize,
    p: usize,
    out: Vec<f64>,
    inbox: Vec<f64>,
    out_slot: Memslot,
    in_slot: Memslot,
}

impl Control {
    /// Process 0's `values` on every process (everyone passes a slice of one length).
    fn agree(&mut self, ctx: &mut Context, values: &[f64]) -> Result<Vec<f64>> {
        let n = values.len();
        assert!(n <= self.out.len());
        if self.me == 0 {
            self.out[..n].copy_from_slice(values);
            for q in 1..self.p {
                ctx.put(self.out_slot, 0, q as Pid, self.in_slot, 0, n * 8, MSG_DEFAULT)?;
            }
        }
        ctx.sync(SYNC_DEFAULT)?;
        Ok(if self.me == 0 { values.to_vec() } else { self.inbox[..n].to_vec() })
    }
}

/// Runs the total-exchange measurement on this context's processes (collective: every
/// process calls it with the same `cfg`) and returns the same [`Report`] on each.
///
/// It resizes the memory register to [`MEMORY_SLOTS`] and the message queue to what
/// the largest exchange needs (2·n_max + p), so call it where the program has nothing
/// registered or queued, and resize again afterwards.
pub fn measure(ctx: &mut Context, cfg: &BenchConfig) -> Result<Report> {
    measure_alongside(ctx, cfg, &mut || Ok(()))
}

/// [`measure`], calling `alongside` after every sample round (every process at the
/// same point: it may be collective), e.g. to take a sample of a reference so that the
/// reference and LPF are timed interleaved, on the same machine state.
pub fn measure_alongside(ctx: &mut Context, cfg: &BenchConfig, alongside: &mut dyn FnMut() -> Result<()>) -> Result<Report> {
    let p = ctx.nprocs() as usize;
    let me = ctx.pid() as usize;
    let samples = cfg.samples.max(2);
    let n_max_of = |w: usize| (cfg.total_bytes / p / w.max(1)).max(4 * p);
    let max_msgs = cfg.word_sizes.iter().map(|&w| n_max_of(w)).max().unwrap_or(0);
    ctx.resize_memory_register(MEMORY_SLOTS)?;
    ctx.resize_message_queue(2 * max_msgs + p)?;
    ctx.sync(SYNC_DEFAULT)?;

    // Control channel: room for every sample of every point of every word size.
    let ctl_len = (cfg.word_sizes.len() * 4 * samples).max(4);
    let mut out = vec![0f64; ctl_len];
    let mut inbox = vec![0f64; ctl_len];
    // SAFETY: both vectors outlive their registrations (deregistered below) and are
    // touched only between syncs by `Control::agree`.
    let out_slot = unsafe { ctx.register_local_raw(out.as_mut_ptr().cast(), ctl_len * 8)? };
    // SAFETY: as above.
    let in_slot = unsafe { ctx.register_global_raw(inbox.as_mut_ptr().cast(), ctl_len * 8)? };
    let mut ctl = Control { me, p, out, inbox, out_slot, in_slot };
    ctx.sync(SYNC_DEFAULT)?;

    let mut all_samples = Vec::new();
    let mut plan = Vec::new();
    for &w in &cfg.word_sizes {
        let w = w.max(1);
        let n_max = n_max_of(w);
        let seg = if p == 1 { n_max } else { n_max.div_ceil(p - 1) };
        let mut send = vec![0u8; n_max * w];
        send.iter_mut().enumerate().for_each(|(i, x)| *x = i as u8);
        let recv_len = if p == 1 { n_max * w } else { p * seg * w };
        let mut recv = vec![0u8; recv_len];
        // SAFETY: the buffers outlive the registrations (deregistered at the end of this
        // iteration); only LPF touches them meanwhile.
        let send_slot = unsafe { ctx.register_local_raw(send.as_mut_ptr(), send.len())? };
        // SAFETY: as above.
        let recv_slot = unsafe { ctx.register_global_raw(recv.as_mut_ptr(), recv.len())? };
        ctx.sync(SYNC_DEFAULT)?;
        let ex = Exchange { p, me, w, seg, send: send_slot, recv: recv_slot };
        let points = [0, p, 2 * p, n_max];
        // Calibrate: one warm-up superstep each, then process 0 picks the repetitions.
        let mut reps = [1u64; 4];
        let mut want = [0f64; 4];
        for (k, &n) in points.iter().enumerate() {
            ex.time(ctx, n, 1)?;
            let t1 = ex.time(ctx, n, 1)?.max(1e-9);
            want[k] = (cfg.sample_time / t1).ceil().clamp(1.0, 1e6);
        }
        let agreed = ctl.agree(ctx, &want)?;
        for k in 0..4 {
            reps[k] = agreed[k] as u64;
        }
        let mut t = vec![[0f64; 4]; samples];
        for sample in t.iter_mut() {
            for k in 0..4 {
                sample[k] = ex.time(ctx, points[k], reps[k])?;
            }
            alongside()?;
        }
        ctx.deregister(recv_slot)?;
        ctx.deregister(send_slot)?;
        drop((send, recv));
        all_samples.extend(t.iter().flatten().copied());
        plan.push((w, n_max, reps));
    }
    // Everyone reports process 0's clock.
    let all_samples = ctl.agree(ctx, &all_samples)?;
    ctx.deregister(ctl.in_slot)?;
    ctx.deregister(ctl.out_slot)?;

    let mut words = Vec::new();
    for (i, &(w, n_max, reps)) in plan.iter().enumerate() {
        let t: Vec<[f64; 4]> =
            (0..samples).map(|s| std::array::from_fn(|k| all_samples[(i * samples + s) * 4 + k])).collect();
        let span = (n_max - 2 * p) as f64 * w as f64;
        let g: Vec<f64> = t.iter().map(|s| (s[3] - s[2]) / span).collect();
        let l: Vec<f64> = t.iter().map(|s| s[0].max(2.0 * s[1] - s[2])).collect();
        let col = |k: usize| Estimate::from_samples(&t.iter().map(|s| s[k]).collect::<Vec<_>>());
        words.push(WordResult {
            word: w,
            n_max,
            g: Estimate::from_samples(&g),
            l: Estimate::from_samples(&l),
            t: [col(0), col(1), col(2), col(3)],
            reps,
        });
    }
    if words.iter().any(|w| !w.g.mean.is_finite()) {
        return Err(Error::fatal("probe: a measurement came out non-finite"));
    }
    Ok(Report { engine: ctx.engine_name(), nprocs: p as Pid, samples, total_bytes: cfg.total_bytes, words })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates() {
        let e = Estimate::from_samples(&[1.0, 2.0, 3.0]);
        assert_eq!(e.mean, 2.0);
        assert!((e.ci95 - 4.303 * (1.0f64 / 3.0).sqrt()).abs() < 1e-9);
        assert!(Estimate::from_samples(&[5.0]).ci95.is_infinite());
    }

    #[test]
    fn measure_runs_on_shm() {
        let cfg = BenchConfig { word_sizes: vec![8, 4096], total_bytes: 64 << 10, samples: 2, sample_time: 0.0005 };
        for p in [1, 3] {
            let got = std::sync::Mutex::new(Vec::new());
            lpf::Root::with_max_procs(p)
                .exec(p, &|ctx: &mut Context, _| {
                    let r = measure(ctx, &cfg).unwrap();
                    got.lock().unwrap().push(r);
                }, lpf::Args::none())
                .unwrap();
            let got = got.into_inner().unwrap();
            assert_eq!(got.len(), p as usize);
            assert!(got.iter().all(|r| *r == got[0]), "the same report everywhere");
            let r = &got[0];
            assert_eq!(r.words.len(), 2);
            assert!(r.words.iter().all(|w| w.t.iter().all(|t| t.mean > 0.0) && w.n_max >= 4 * p as usize));
            assert_eq!(r.cost_points().len(), 2);
        }
    }
}
