/*
 * debug/lpf/core.h: the debug layer of lpf/core.h. Include it instead of
 * <lpf/core.h> (or build with -I<prefix>/include/debug first on the include
 * path) and link as usual (-llpf_core): every lpf_* call of the including code
 * goes to a checking wrapper that knows its file and line. From the first such
 * call on, the whole process runs in debug mode, as with LPF_DEBUG=1: a call
 * that misuses LPF (including what the specification leaves undefined:
 * unknown attributes, NULL arguments with a positive size, read-write
 * conflicts within a superstep, global deregistrations differing between
 * processes) prints "lpf debug: FILE:LINE: <the call and the problem>" and
 * aborts the process. Every process of a section must run in debug mode or
 * none (some checks are collective, at lpf_sync).
 */
#ifndef LPF_DEBUG_CORE_H
#define LPF_DEBUG_CORE_H

#include "../../lpf/core.h"

#ifdef __cplusplus
extern "C" {
#endif

extern _LPFLIB_API lpf_err_t lpf_debug_exec(const char * file, int line, lpf_t ctx, lpf_pid_t P, lpf_spmd_t spmd, lpf_args_t args);
extern _LPFLIB_API lpf_err_t lpf_debug_hook(const char * file, int line, lpf_init_t init, lpf_spmd_t spmd, lpf_args_t args);
extern _LPFLIB_API lpf_err_t lpf_debug_rehook(const char * file, int line, lpf_t ctx, lpf_spmd_t spmd, lpf_args_t args);
extern _LPFLIB_API lpf_err_t lpf_debug_register_global(const char * file, int line, lpf_t ctx, void * pointer, size_t size, lpf_memslot_t * memslot);
extern _LPFLIB_API lpf_err_t lpf_debug_register_local(const char * file, int line, lpf_t ctx, void * pointer, size_t size, lpf_memslot_t * memslot);
extern _LPFLIB_API lpf_err_t lpf_debug_deregister(const char * file, int line, lpf_t ctx, lpf_memslot_t memslot);
extern _LPFLIB_API lpf_err_t lpf_debug_put(const char * file, int line, lpf_t ctx, lpf_memslot_t src_slot, size_t src_offset,
                                           lpf_pid_t dst_pid, lpf_memslot_t dst_slot, size_t dst_offset, size_t size, lpf_msg_attr_t attr);
extern _LPFLIB_API lpf_err_t lpf_debug_get(const char * file, int line, lpf_t ctx, lpf_pid_t src_pid, lpf_memslot_t src_slot, size_t src_offset,
                                           lpf_memslot_t dst_slot, size_t dst_offset, size_t size, lpf_msg_attr_t attr);
extern _LPFLIB_API lpf_err_t lpf_debug_sync(const char * file, int line, lpf_t ctx, lpf_sync_attr_t attr);
extern _LPFLIB_API lpf_err_t lpf_debug_probe(const char * file, int line, lpf_t ctx, lpf_machine_t * params);
extern _LPFLIB_API lpf_err_t lpf_debug_resize_memory_register(const char * file, int line, lpf_t ctx, size_t max_regs);
extern _LPFLIB_API lpf_err_t lpf_debug_resize_message_queue(const char * file, int line, lpf_t ctx, size_t max_msgs);

#ifdef __cplusplus
}
#endif

#define lpf_exec(...) lpf_debug_exec(__FILE__, __LINE__, __VA_ARGS__)
#define lpf_hook(...) lpf_debug_hook(__FILE__, __LINE__, __VA_ARGS__)
#define lpf_rehook(...) lpf_debug_rehook(__FILE__, __LINE__, __VA_ARGS__)
#define lpf_register_global(...) lpf_debug_register_global(__FILE__, __LINE__, __VA_ARGS__)
#define lpf_register_local(...) lpf_debug_register_local(__FILE__, __LINE__, __VA_ARGS__)
#define lpf_deregister(...) lpf_debug_deregister(__FILE__, __LINE__, __VA_ARGS__)
#define lpf_put(...) lpf_debug_put(__FILE__, __LINE__, __VA_ARGS__)
#define lpf_get(...) lpf_debug_get(__FILE__, __LINE__, __VA_ARGS__)
#define lpf_sync(...) lpf_debug_sync(__FILE__, __LINE__, __VA_ARGS__)
#define lpf_probe(...) lpf_debug_probe(__FILE__, __LINE__, __VA_ARGS__)
#define lpf_resize_memory_register(...) lpf_debug_resize_memory_register(__FILE__, __LINE__, __VA_ARGS__)
#define lpf_resize_message_queue(...) lpf_debug_resize_message_queue(__FILE__, __LINE__, __VA_ARGS__)

#endif
