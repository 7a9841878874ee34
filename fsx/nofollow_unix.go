//go:build unix

package fsx

import "syscall"

// NoFollow is the open flag that makes opening a symlink fail (for
// ReadRegular's flag), so a link planted among a store's files cannot
// redirect a read.
const NoFollow = syscall.O_NOFOLLOW

// dirFlags make OpenDir's open fail at once on anything but a directory.
const dirFlags = syscall.O_DIRECTORY | syscall.O_NONBLOCK
