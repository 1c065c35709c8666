#!/usr/bin/env python3
"""hostile-cfi.py [NAME...]: print the x86-64 assembly of issue 32's
hostile unwind tables, one function per attack (all, or the NAMEs), for
tests/security-cfi.test: each function calls pause() in a loop, and its
FDE carries the attack from its first instruction (.cfi_escape bytes).
hostile-cfi.py --names: the attacks' names."""
import sys


def esc(b):
    return '\t.cfi_escape ' + ','.join(str(x) for x in b) + '\n'
def rept(n, b):
    return '\t.rept %d\n' % n + esc(b) + '\t.endr\n'
A = [
 # CFA: lit0 not lit1 const1u 63 shl swap div (INT64_MIN / -1)
 ('atk_div', esc([0x0f, 8, 0x30, 0x20, 0x31, 0x08, 63, 0x24, 0x16, 0x1b])),
 # DW_OP_skip -3: a loop in the CFA rule, in the return address's
 ('atk_skip_cfa', esc([0x0f, 3, 0x2f, 0xfd, 0xff])),
 ('atk_skip_ra', esc([0x10, 16, 3, 0x2f, 0xfd, 0xff])),
 # lit1; bra -4 in the return address's val_expression
 ('atk_bra_val', esc([0x16, 16, 4, 0x31, 0x28, 0xfc, 0xff])),
 # 2,000,000 DW_CFA_remember_state in one FDE
 ('atk_remember', rept(2000, [0x0a] * 1000)),
 # 100,000 of them (under the bound of an FDE's size)
 ('atk_nest', rept(100, [0x0a] * 1000)),
 # a 1,024-deep expression stack; DW_OP_pick 255; restore_state alone;
 # def_cfa_register 0xffffffff; a 100-byte LEB128; a deref of a kernel
 # address; a frame that returns to itself; a huge GNU_args_size; 4 MB of
 # DW_CFA_nop (then an instruction: ld drops trailing nops)
 ('atk_deep', esc([0x0f, 0x80, 0x08] + [0x30] * 1024)),
 ('atk_pick', esc([0x0f, 3, 0x30, 0x15, 0xff])),
 ('atk_restore', esc([0x0b])),
 ('atk_reg', esc([0x0d, 0xff, 0xff, 0xff, 0xff, 0x0f])),
 ('atk_leb', esc([0x0e] + [0x80] * 99 + [0x01])),
 ('atk_kernel', esc([0x0f, 10, 0x0e, 0, 0, 0, 0, 0, 0x80, 0xff, 0xff, 0x06])),
 ('atk_self', '\t.cfi_def_cfa %rsp, 0\n' + esc([0x16, 16, 2, 0x80, 0x00])),
 ('atk_args', esc([0x2e] + [0xff] * 9 + [0x01])),
 ('atk_nops', rept(4096, [0] * 1024) + esc([0x0e, 16])),
]
if sys.argv[1:] == ['--names']:
    print(' '.join(n for n, _ in A))
    sys.exit(0)
names = sys.argv[1:] or [n for n, _ in A]
out = ['\t.text\n']
for n, body in A:
    if n not in names:
        continue
    # The rows are right up to the attack, which holds from the call on.
    out.append('\t.globl %s\n\t.type %s, @function\n%s:\n\t.cfi_startproc\n'
               '\tsub $8, %%rsp\n\t.cfi_adjust_cfa_offset 8\n%s'
               '1:\tcall pause@PLT\n\tjmp 1b\n\t.cfi_endproc\n\t.size %s, .-%s\n'
               % (n, n, n, body, n, n))
out.append('\t.section .note.GNU-stack,"",@progbits\n')
sys.stdout.write(''.join(out))
