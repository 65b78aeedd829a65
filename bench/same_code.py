#!/usr/bin/env python3
"""Compares the machine code of two builds of the same object files, function by function.

    bench/same_code.py [--objdump PROG] [--rename OLD=NEW ...] OLD.o NEW.o [OLD2.o NEW2.o ...]

For a refactor that should not change what runs (code moved between files, tile constants turned
into data), identical instructions per function are stronger evidence than any timing: nothing can
have got slower. Functions are matched by (demangled) name; instructions are compared without
addresses, encodings and symbol offsets (code moves inside the object). Prints the functions that
differ, appear or disappear, and exits 1 if any do. WebAssembly objects (Emscripten):
--objdump /usr/lib/llvm-14/bin/llvm-objdump (call targets are function indices there, so they are
masked too). --rename rewrites OLD to NEW in the first object's names (a namespace that was renamed).
"""
import argparse, re, subprocess, sys


def functions(obj, objdump, renames=()):
    out = subprocess.run([objdump, "-d", "-C", "--no-show-raw-insn", obj],
                         check=True, capture_output=True, text=True).stdout
    funcs, name = {}, None
    for line in out.splitlines():
        m = re.match(r"^(?:[0-9a-f]+ )?<(.*)>:$", line.strip())
        if m:
            name = m.group(1)
            for old, new in renames:
                name = name.replace(old, new)
            funcs[name] = []
        elif line.startswith("Disassembly of section"):
            name = None  # section order may change; the header is not part of a function
        elif name and line.strip():
            # drop the address, symbolic targets (<fn+0x12>), rip offsets and wasm call indices
            insn = re.sub(r"^[0-9a-f]+:\s*", "", line.strip())
            insn = re.sub(r"\s*#.*$", "", insn)  # comments: wasm label numbers, rip targets
            # a branch target as its offset in the named function (the absolute address moves
            # with the function's place in its section)
            insn = re.sub(r"\b[0-9a-f]+ <.*(\+0x[0-9a-f]+)>$", r"<\1>", insn)
            insn = re.sub(r"\s*(?<!\S)<[^+].*>$|\b0x[0-9a-f]+\(%rip\)|(?<=call)\s+\d+", "", insn)
            funcs[name].append(insn)
    for insns in funcs.values():  # padding to the next function's alignment
        while insns and re.match(r"(data16 )*(cs )*(nop|xchg\s+%ax,%ax|int3)", insns[-1]):
            insns.pop()
    return funcs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--objdump", default="objdump")
    ap.add_argument("--rename", action="append", default=[])
    ap.add_argument("objects", nargs="+")
    args = ap.parse_args()
    if len(args.objects) % 2:
        sys.exit(__doc__)
    renames = [r.split("=", 1) for r in args.rename]
    differ = 0
    for old, new in zip(args.objects[::2], args.objects[1::2]):
        a, b = functions(old, args.objdump, renames), functions(new, args.objdump)
        changed = [f for f in a if f in b and a[f] != b[f]]
        gone = [f for f in a if f not in b]
        added = [f for f in b if f not in a]
        same = sum(1 for f in a if f in b and a[f] == b[f])
        print(f"{new}: {same} functions identical, {len(changed)} changed, {len(gone)} gone, {len(added)} new")
        for tag, names in (("changed", changed), ("gone", gone), ("new", added)):
            for f in names:
                print(f"  {tag}: {f[:160]}")
        differ += len(changed) + len(gone) + len(added)
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
