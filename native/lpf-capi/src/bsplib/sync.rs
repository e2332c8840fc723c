//! A `bsplib_sync`: the up to four LPF supersteps the module doc describes, one
//! method per step.

use super::{err, BSPlib, PutSrc, Reg, R, BSPLIB_ERR_FATAL, BSPLIB_ERR_POPREG_MISMATCH, BSPLIB_ERR_PUSHREG_MISMATCH, BSPLIB_ERR_TAGSIZE_MISMATCH, F_POPS, F_PUSHES, F_TAGSIZE, FIELDS, LEN, OWN_SLOTS};
use crate::lpf_pid_t;
use lpf::{Context, Memslot, SYNC_DEFAULT};

impl BSPlib {
    /// Step 1 of a sync: every process's row (counts, fields and registration
    /// entries) in every table, the table grown first when some row's entries do not
    /// fit; then the checks every process makes alike on the same table.
    fn exchange_counts(&mut self) -> R<()> {
        let (p, me) = (self.p as usize, self.pid as usize);
        let entries: Vec<u64> = self.pushes.iter().map(|&(_, size)| size as u64).chain(self.pops.iter().copied()).collect();
        loop {
            let mut row = vec![0u64; self.row_len()];
            for x in &self.puts {
                row[x.pid as usize] += 1;
            }
            for x in &self.gets {
                row[p + x.pid as usize] += 1;
            }
            for x in &self.sends {
                row[2 * p + x.pid as usize] += self.encoded(x.payload) as u64;
            }
            for d in 0..p {
                if row[2 * p + d] > 0 {
                    row[d] += 1;
                }
            }
            row[self.field(F_PUSHES)] = self.pushes.len() as u64;
            row[self.field(F_POPS)] = self.pops.len() as u64;
            row[self.field(F_TAGSIZE)] = self.next_tagsize as u64;
            if entries.len() <= self.entries_cap {
                let at = self.field(FIELDS);
                row[at..at + entries.len()].copy_from_slice(&entries);
            }
            self.exchange_row(&row)?;
            let exited = self.exited_peers();
            if !exited.is_empty() {
                self.ended = true;
                return err(BSPLIB_ERR_FATAL, format!("bsp_sync: process(es) {exited:?} called bsplib_destroy instead (the processes called bsp_sync different numbers of times)"));
            }
            let most = (0..p).map(|q| (self.cell(q, self.field(F_PUSHES)) + self.cell(q, self.field(F_POPS))) as usize).max().unwrap_or(0);
            if most <= self.entries_cap {
                break;
            }
            self.grow_table(most)?;
        }
        let by_pid = |f: usize| -> Vec<u64> { (0..p).map(|q| self.cell(q, self.field(f))).collect() };
        let (pushes, pops, tagsizes) = (by_pid(F_PUSHES), by_pid(F_POPS), by_pid(F_TAGSIZE));
        if pushes[me] != self.pushes.len() as u64 || pops[me] != self.pops.len() as u64 {
            return err(BSPLIB_ERR_FATAL, "bsp_sync: the count table is inconsistent");
        }
        let mismatch = if pushes.iter().any(|&n| n != pushes[0]) {
            Some((BSPLIB_ERR_PUSHREG_MISMATCH, format!("the processes registered different numbers of areas in this superstep (bsp_push_reg counts by pid: {pushes:?})")))
        } else if pops.iter().any(|&n| n != pops[0]) {
            Some((BSPLIB_ERR_POPREG_MISMATCH, format!("the processes deregistered different numbers of areas in this superstep (bsp_pop_reg counts by pid: {pops:?})")))
        } else if tagsizes.iter().any(|&n| n != tagsizes[0]) {
            Some((BSPLIB_ERR_TAGSIZE_MISMATCH, format!("the processes set different tag sizes for the next superstep (by pid: {tagsizes:?})")))
        } else {
            let first = self.pushes.len();
            (0..self.pops.len()).find(|&k| (0..p).any(|q| self.entry(q, first + k) != self.entry(0, first + k))).map(|k| {
                let seqs: Vec<u64> = (0..p).map(|q| self.entry(q, first + k)).collect();
                (BSPLIB_ERR_POPREG_MISMATCH, format!("bsp_pop_reg number {k} of this superstep names different registrations on different processes (registration numbers by pid: {seqs:?}; a process pops the most recent registration of the address it names)"))
            })
        };
        if let Some((code, msg)) = mismatch {
            self.drop_requests();
            return err(code, format!("bsp_sync: {msg}; this superstep's requests are dropped"));
        }
        Ok(())
    }

    pub(super) fn sync(&mut self) -> R<()> {
        if self.ended {
            return err(BSPLIB_ERR_FATAL, "bsp_sync: another process has called bsplib_destroy (the processes called bsp_sync different numbers of times)");
        }
        // 1. counts and registration entries
        self.exchange_counts()?;
        let c = self.ctx()?;
        let (p, me) = (self.p as usize, self.pid as usize);
        // The size every process gives each new registration.
        let push_sizes: Vec<Vec<usize>> = (0..self.pushes.len()).map(|k| (0..p).map(|q| self.entry(q, k) as usize).collect()).collect();
        // 2. resize
        let any_two_phase = self.reserve(c)?;
        // 3. gets and the inbox
        let incoming: usize = (0..p).map(|s| self.cell(s, 2 * p + me) as usize).sum();
        let mut inbox = vec![0u8; incoming.max(1)];
        let mut inbox_slot = Memslot::INVALID;
        if any_two_phase {
            // SAFETY: `inbox` is neither moved nor resized until it is deregistered
            // after the sync of step 4 (it then moves into `self.inbox`).
            inbox_slot = unsafe { c.register_global_raw(inbox.as_mut_ptr(), incoming)? };
            self.run_gets(c)?;
        }
        // 4. puts and messages
        self.stage_hp_puts();
        let msg_ranges = self.stage_messages();
        let stage_slot = self.post_stage(c, &msg_ranges, inbox_slot)?;
        let new_regs = self.register_pushes(c, push_sizes)?;
        c.sync(SYNC_DEFAULT)?;
        c.deregister(stage_slot)?;
        if inbox_slot != Memslot::INVALID {
            c.deregister(inbox_slot)?;
        }
        self.apply_pops(c)?;
        self.regs.extend(new_regs);
        self.drop_requests();
        inbox.truncate(incoming);
        self.receive(inbox);
        Ok(())
    }

    /// Step 2: the message queue and the memory register grow (at least doubling)
    /// when the table asks for more than was reserved, followed by a sync. Returns
    /// whether some process gets or sends messages (then step 3 runs).
    fn reserve(&mut self, c: &mut Context) -> R<bool> {
        let p = self.p as usize;
        let t = |q: usize, i: usize| self.cell(q, i) as usize;
        let mut need_msgs = 0;
        let mut any_two_phase = false;
        for q in 0..p {
            let out: usize = (0..p).map(|d| t(q, d) + t(q, p + d)).sum();
            let inn: usize = (0..p).map(|s| t(s, q) + t(s, p + q)).sum();
            need_msgs = need_msgs.max(out + inn);
            any_two_phase |= (0..p).any(|d| t(q, p + d) > 0 || t(q, 2 * p + d) > 0);
        }
        let max_push = self.pushes.len();
        let need_msgs = need_msgs + 2 * p;
        let need_regs = self.regs.len() + max_push + OWN_SLOTS;
        if need_msgs > self.msg_cap || need_regs > self.mem_cap {
            self.msg_cap = self.msg_cap.max(need_msgs).max(2 * self.msg_cap.min(need_msgs));
            self.mem_cap = self.mem_cap.max(need_regs).max(2 * self.mem_cap.min(need_regs));
            c.resize_message_queue(self.msg_cap)?;
            c.resize_memory_register(self.mem_cap)?;
            c.sync(SYNC_DEFAULT)?;
        }
        Ok(any_two_phase)
    }

    /// Step 3: the gets run into a local staging buffer (in the same superstep as the
    /// inbox's registration), copied to their destinations after the sync, so they
    /// read the values from before this superstep's puts.
    fn run_gets(&self, c: &mut Context) -> R<()> {
        let total: usize = self.gets.iter().map(|g| g.size).sum();
        let mut gstage = vec![0u8; total.max(1)];
        // SAFETY: `gstage` lives, unmoved and unresized, until it is deregistered
        // after the sync below.
        let gslot = unsafe { c.register_local_raw(gstage.as_mut_ptr(), total)? };
        let mut at = 0;
        for g in &self.gets {
            c.get(g.pid, g.slot, g.offset, gslot, at, g.size, 0)?;
            at += g.size;
        }
        c.sync(SYNC_DEFAULT)?;
        c.deregister(gslot)?;
        let mut at = 0;
        for g in &self.gets {
            // SAFETY: the program passed `size` writable bytes at `dst`.
            unsafe { std::ptr::copy_nonoverlapping(gstage.as_ptr().add(at), g.dst, g.size) };
            at += g.size;
        }
        Ok(())
    }

    /// The unbuffered puts (`bsp_hpput`) read the program's memory now, at the sync,
    /// into the staging buffer.
    fn stage_hp_puts(&mut self) {
        for x in &mut self.puts {
            if let PutSrc::Pointer(ptr) = x.src {
                let at = self.stage.len();
                // SAFETY: bsp_hpput's source (`size` readable bytes) stays readable
                // until the sync.
                self.stage.extend_from_slice(unsafe { std::slice::from_raw_parts(ptr, x.size) });
                x.src = PutSrc::Copied(at);
            }
        }
    }

    /// The messages, grouped by destination, after the put data in the staging
    /// buffer: per destination with messages, (destination, start in the buffer,
    /// length, offset in its inbox).
    fn stage_messages(&mut self) -> Vec<(usize, usize, usize, usize)> {
        let (p, me) = (self.p as usize, self.pid as usize);
        let mut by_dest: Vec<Vec<usize>> = vec![Vec::new(); p];
        for (i, s) in self.sends.iter().enumerate() {
            by_dest[s.pid as usize].push(i);
        }
        let mut msg_ranges = Vec::new();
        for (d, list) in by_dest.iter().enumerate() {
            let start = self.stage.len();
            for &i in list {
                let s = &self.sends[i];
                match s.hp {
                    None => {
                        let n = self.encoded(s.payload);
                        self.stage.extend_from_slice(&self.outbox[s.at..s.at + n]);
                    }
                    Some(payload) => {
                        let n = self.encoded(0);
                        self.stage.extend_from_slice(&self.outbox[s.at..s.at + n]);
                        if s.payload > 0 {
                            // SAFETY: bsp_hpsend's payload stays readable until the sync.
                            self.stage.extend_from_slice(unsafe { std::slice::from_raw_parts(payload, s.payload) });
                        }
                    }
                }
            }
            if self.stage.len() > start {
                let offset: usize = (0..me).map(|s| self.cell(s, 2 * p + d) as usize).sum();
                msg_ranges.push((d, start, self.stage.len() - start, offset));
            }
        }
        msg_ranges
    }

    /// Registers the staging buffer and posts from it the puts and the message ranges
    /// (into the inbox at `inbox_slot`); returns the buffer's slot.
    fn post_stage(&mut self, c: &mut Context, msg_ranges: &[(usize, usize, usize, usize)], inbox_slot: Memslot) -> R<Memslot> {
        let stage_len = self.stage.len();
        if self.stage.is_empty() {
            self.stage.push(0);
        }
        // SAFETY: `stage` is neither moved nor resized until the caller deregisters
        // the slot after the sync.
        let sslot = unsafe { c.register_local_raw(self.stage.as_mut_ptr(), stage_len)? };
        for x in &self.puts {
            if let PutSrc::Copied(at) = x.src {
                c.put(sslot, at, x.pid, x.slot, x.offset, x.size, 0)?;
            }
        }
        for &(d, start, len, offset) in msg_ranges {
            c.put(sslot, start, d as lpf_pid_t, inbox_slot, offset, len, 0)?;
        }
        Ok(sslot)
    }

    /// This superstep's registrations (`bsp_push_reg`), numbered in order, with the
    /// size every process gave each (`push_sizes`); usable after the sync.
    fn register_pushes(&mut self, c: &mut Context, push_sizes: Vec<Vec<usize>>) -> R<Vec<Reg>> {
        let mut new_regs = Vec::new();
        for (&(ident, size), sizes) in self.pushes.iter().zip(push_sizes) {
            let ptr = if ident == 0 { std::ptr::null_mut() } else { ident as *mut u8 };
            // SAFETY: the program passed `size` bytes at `ident` to bsp_push_reg and
            // keeps them until it pops the registration.
            let slot = unsafe { c.register_global_raw(ptr, size)? };
            new_regs.push(Reg { ident, slot, seq: self.next_seq, sizes });
            self.next_seq += 1;
        }
        Ok(new_regs)
    }

    /// Pops name registrations made before this superstep (by number, the same on
    /// every process: checked in step 1).
    fn apply_pops(&mut self, c: &mut Context) -> R<()> {
        for seq in std::mem::take(&mut self.pops) {
            if let Some(i) = self.regs.iter().position(|r| r.seq == seq) {
                c.deregister(self.regs[i].slot)?;
                self.regs.remove(i);
            }
        }
        Ok(())
    }

    /// The messages received (`inbox`), queued and parsed with the tag size they were
    /// sent with; the next tag size takes effect.
    fn receive(&mut self, inbox: Vec<u8>) {
        self.queue.clear();
        let mut at = 0;
        while at + LEN <= inbox.len() {
            let n = u64::from_le_bytes(inbox[at..at + LEN].try_into().unwrap()) as usize;
            self.queue.push_back(at);
            at += LEN + self.tagsize + n;
        }
        self.inbox = inbox;
        self.received_tagsize = self.tagsize;
        self.tagsize = self.next_tagsize;
    }
}
