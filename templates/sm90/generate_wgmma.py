#!/usr/bin/env python3
"""Writes templates/sm90/wgmma_ops.cuh: the wgmma.mma_async forms the sm90 family uses, one per
N, as inline PTX. Each form lists every accumulator register, which is why they are generated:
the file spells out those lists once per N and writes the asm statement and the Wgmma<N>
specialisation once, as macros that every N expands.

    templates/sm90/generate_wgmma.py > templates/sm90/wgmma_ops.cuh

tests/templates checks that the file in the tree is what this script writes."""

WIDTHS = (64, 128, 192, 256)  # N: keys per S tile (QK^T) and head dims (PV; dK = dS^T Q at MLA's 192)


def accumulators(n):
    return ", ".join(f'"+f"(d[{j}][{e}])' for j in range(n // 8) for e in range(4))


def register_list(first, count):
    return ", ".join(f"%{first + i}" for i in range(count))


# The macros every N expands (backslash-continued lines, aligned by main()).
BODY = [
    "// One wgmma of width N, depth and element types KIND (\"k16.f32.bf16.bf16\"). The accumulators are",
    "// the asm's first N / 2 operands (FJ_WGMMA_REGS_N, bound to d by FJ_WGMMA_D_N); OPERANDS are A and",
    "// B after them, TAIL the scale and transpose immediates, FLAG the operand number of `accumulate`",
    "// (0: d = A * B).",
    "#define FJ_WGMMA_ASM(N, KIND, OPERANDS, TAIL, FLAG, ...)",
    '  asm volatile("{\\n .reg .pred p;\\n setp.ne.b32 p, %" #FLAG ", 0;\\n"',
    '               " wgmma.mma_async.sync.aligned.m64n" #N KIND " " FJ_WGMMA_REGS_##N ", " OPERANDS',
    '               ", " TAIL ";\\n}\\n"',
    "               : FJ_WGMMA_D_##N",
    "               : __VA_ARGS__)",
    "",
    "// Both 16-bit element types of one form.",
    "#define FJ_WGMMA_FORM(N, OPERANDS, TAIL, FLAG, ...)",
    "  if constexpr (kBf16) {",
    '    FJ_WGMMA_ASM(N, "k16.f32.bf16.bf16", OPERANDS, TAIL, FLAG, __VA_ARGS__);',
    "  } else {",
    '    FJ_WGMMA_ASM(N, "k16.f32.f16.f16", OPERANDS, TAIL, FLAG, __VA_ARGS__);',
    "  }",
    "",
    "// One shared-memory form NAME of width N: A and B descriptors, transposed as TRANS_A, TRANS_B say",
    "// (0: K-major; 1: A M-major, B N-major).",
    "#define FJ_WGMMA_SS(N, NAME, TRANS_A, TRANS_B, SS_OPERANDS, SS_FLAG)",
    "  template <bool kBf16>",
    "  static __device__ __forceinline__ void NAME(float (&d)[N / 8][4], unsigned long long a, unsigned long long b,",
    "                                              int accumulate) {",
    '    FJ_WGMMA_FORM(N, SS_OPERANDS, "p, 1, 1, " #TRANS_A ", " #TRANS_B, SS_FLAG, "l"(a), "l"(b), "r"(accumulate))',
    "  }",
    "",
    "// Wgmma<N>: ss with A and B from shared memory, both K-major; ss_mn with both transposed (A",
    "// M-major, B N-major); ss_kn with A K-major and B N-major; rs with A from registers and B",
    "// N-major in shared memory (imm-trans-b = 1); ss_e4m3 and rs_e4m3 the same as ss and rs on FP8",
    "// E4M3 elements, 32 deep, B K-major (FP8 takes no transposes). *_OPERANDS and *_FLAG number the",
    "// asm operands that follow the N / 2 accumulators.",
    "#define FJ_WGMMA_WIDTH(N, SS_OPERANDS, SS_FLAG, RS_OPERANDS, RS_FLAG)",
    "  template <>",
    "  struct Wgmma<N> {",
    "    FJ_WGMMA_SS(N, ss, 0, 0, SS_OPERANDS, SS_FLAG)",
    "    FJ_WGMMA_SS(N, ss_mn, 1, 1, SS_OPERANDS, SS_FLAG)",
    "    FJ_WGMMA_SS(N, ss_kn, 0, 1, SS_OPERANDS, SS_FLAG)",
    "    template <bool kBf16>",
    "    static __device__ __forceinline__ void rs(float (&d)[N / 8][4], const unsigned (&a)[4], unsigned long long b,",
    "                                              int accumulate) {",
    '      FJ_WGMMA_FORM(N, RS_OPERANDS, "p, 1, 1, 1", RS_FLAG, "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b),',
    '                    "r"(accumulate))',
    "    }",
    "    static __device__ __forceinline__ void ss_e4m3(float (&d)[N / 8][4], unsigned long long a, unsigned long long b,",
    "                                                   int accumulate) {",
    '      FJ_WGMMA_ASM(N, "k32.f32.e4m3.e4m3", SS_OPERANDS, "p, 1, 1", SS_FLAG, "l"(a), "l"(b), "r"(accumulate));',
    "    }",
    "    static __device__ __forceinline__ void rs_e4m3(float (&d)[N / 8][4], const unsigned (&a)[4],",
    "                                                   unsigned long long b, int accumulate) {",
    '      FJ_WGMMA_ASM(N, "k32.f32.e4m3.e4m3", RS_OPERANDS, "p, 1, 1", RS_FLAG, "r"(a[0]), "r"(a[1]), "r"(a[2]),',
    '                   "r"(a[3]), "l"(b), "r"(accumulate));',
    "    }",
    "  };",
]


def continued(lines):
    """Joins each #define with the lines after it (up to a blank or comment line) by backslashes."""
    out, block = [], []

    def flush():
        width = max(len(line) for line in block)
        out.extend(line.ljust(width) + " \\" for line in block[:-1])
        out.append(block[-1])
        block.clear()

    for line in lines:
        if line.startswith("#define") or (block and line and not line.startswith("//")):
            block.append(line)
            continue
        if block:
            flush()
        out.append(line)
    if block:
        flush()
    return out


def main():
    print("// flexjit: wgmma.mma_async m64nNk16 (and k32 on FP8) with fp32 accumulators, for N = "
          + ", ".join(str(n) for n in WIDTHS) + ".")
    print("// Generated by templates/sm90/generate_wgmma.py; edit that script, not this file.")
    print("//   Wgmma<N>::ss<kBf16>(d, a_desc, b_desc, accumulate): d (+)= A * B, A [64 x 16] and B [16 x N]")
    print("//     in shared memory, both K-major (Q K^T);")
    print("//   Wgmma<N>::ss_mn<kBf16>(d, a_desc, b_desc, accumulate): the same with A M-major and B N-major")
    print("//     (the backward's dQ = dS K from dS^T and K as stored);")
    print("//   Wgmma<N>::ss_kn<kBf16>(d, a_desc, b_desc, accumulate): A K-major and B N-major (the wide")
    print("//     and split backwards' dV = P^T dO and dK = dS^T Q with P^T and dS^T from shared memory);")
    print("//   Wgmma<N>::rs<kBf16>(d, a, b_desc, accumulate): A from registers (the m16k16 fragment of")
    print("//     each warp's 16 rows), B N-major in shared memory (P V);")
    print("//   Wgmma<N>::ss_e4m3, rs_e4m3: ss and rs on FP8 E4M3 (A [64 x 32], B K-major: the FP8 forward's")
    print("//     Q K^T and P V, with V transposed and A the m16k32 fragment of 8-bit elements).")
    print("// d[j][0..3] is the accumulator of columns 8j..8j+7 in the mma.sync m16n8 layout of each warp.")
    print("// accumulate = 0 overwrites d.")
    print("#pragma once\n")
    print("namespace flexjit {\nnamespace sm90 {\n")
    print("template <int N>\nstruct Wgmma;\n")
    print("\n".join(continued(BODY)) + "\n")
    print("// The accumulator registers of each N and the accumulators they bind to.")
    for n in WIDTHS:
        print(f'#define FJ_WGMMA_REGS_{n} "{{{register_list(0, n // 2)}}}"')
        print(f"#define FJ_WGMMA_D_{n} {accumulators(n)}")
    print()
    for n in WIDTHS:
        r = n // 2
        print(f'FJ_WGMMA_WIDTH({n}, "%{r}, %{r + 1}", {r + 2}, "{{{register_list(r, 4)}}}, %{r + 4}", {r + 5})')
    print()
    for name in ("ASM", "FORM", "SS", "WIDTH") + tuple(f"{kind}_{n}" for n in WIDTHS for kind in ("REGS", "D")):
        print(f"#undef FJ_WGMMA_{name}")
    print()
    print("}  // namespace sm90\n}  // namespace flexjit")


if __name__ == "__main__":
    main()
