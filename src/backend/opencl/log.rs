//! Reading NVIDIA's OpenCL build log: the register counts ptxas prints with `-cl-nv-verbose`.

/// "Used N registers" after "Compiling entry function 'NAME'"; `None` when the log does not
/// mention the kernel.
pub(super) fn ptxas_registers(log: &str, kernel: &str) -> Option<u32> {
    let header = format!("entry function '{kernel}'");
    let mut lines = log.lines().skip_while(|l| !l.contains(&header)).skip(1);
    lines
        .by_ref()
        .take_while(|l| !l.contains("entry function '"))
        .find_map(|l| {
            let rest = &l[l.find("Used ")? + "Used ".len()..];
            let (n, unit) = rest.split_once(' ')?;
            unit.starts_with("register")
                .then(|| n.parse().ok())
                .flatten()
        })
}

#[cfg(test)]
mod tests {
    use super::ptxas_registers;

    const LOG: &str = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'matvec_listing4' for 'sm_90'\n\
ptxas info    : Function properties for matvec_listing4\n    \
0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 18 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]\n\
ptxas info    : Compiling entry function 'matvec_tuned' for 'sm_90'\n\
ptxas info    : Function properties for matvec_tuned\n\
ptxas info    : Used 40 registers, 1024 bytes smem\n";

    #[test]
    fn registers_are_read_per_kernel() {
        assert_eq!(ptxas_registers(LOG, "matvec_listing4"), Some(18));
        assert_eq!(ptxas_registers(LOG, "matvec_tuned"), Some(40));
    }

    #[test]
    fn a_kernel_the_log_does_not_name_has_no_count() {
        assert_eq!(ptxas_registers(LOG, "matvec_listing5"), None);
        assert_eq!(ptxas_registers("", "matvec_tuned"), None);
        // A name that is a prefix of another must not borrow the other's count.
        assert_eq!(ptxas_registers(LOG, "matvec"), None);
    }

    #[test]
    fn a_kernel_without_a_used_line_does_not_take_the_next_kernels_count() {
        let log = "Compiling entry function 'a' for 'sm_90'\n\
                   Compiling entry function 'b' for 'sm_90'\nUsed 7 registers\n";
        assert_eq!(ptxas_registers(log, "a"), None);
        assert_eq!(ptxas_registers(log, "b"), Some(7));
    }
}
