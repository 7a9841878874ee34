//go:build darwin || freebsd || netbsd || openbsd || dragonfly

package fsx

import "syscall"

func ctimeNano(st *syscall.Stat_t) int64 { return st.Ctimespec.Sec*1e9 + st.Ctimespec.Nsec }
