// This file holds no code. Its presence lets spin_linux.go declare the
// runtime functions it links to (entersyscallblock, exitsyscall) without
// bodies: the compiler accepts body-less declarations only in a package
// that has assembly.
