//go:build linux

package fsx

import "syscall"

func ctimeNano(st *syscall.Stat_t) int64 { return st.Ctim.Sec*1e9 + st.Ctim.Nsec }
