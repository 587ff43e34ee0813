//! Large tables read at random, on transparent huge pages where the system offers them.

/// An empty vector with room for `len` elements, on transparent huge pages where the system
/// offers them on request (a hint: without them it works the same, with more TLB misses).
pub(crate) fn huge_vec<T>(len: usize) -> Vec<T> {
    let v: Vec<T> = Vec::with_capacity(len);
    const HUGE: usize = 2 << 20;
    let (start, bytes) = (v.as_ptr() as usize, len * std::mem::size_of::<T>());
    let aligned = start.next_multiple_of(HUGE);
    if bytes >= HUGE && start + bytes > aligned {
        // SAFETY: advice on memory this vector owns; it changes no contents.
        unsafe {
            libc::madvise(
                aligned as *mut libc::c_void,
                start + bytes - aligned,
                libc::MADV_HUGEPAGE,
            );
        }
    }
    v
}
