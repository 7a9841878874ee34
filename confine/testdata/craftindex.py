# craftindex.py MODE PATH NEWOID [SUFFIX], in a git repository: rewrites .git/index
# (version 2) as an attack run did, to test what reads it. MODE namelen: entry
# PATH gets object NEWOID and SUFFIX after its name, git's name length kept (the
# extensions dropped). MODE tree: the entries kept, the cached tree of the
# directory PATH set to the tree NEWOID.
import sys, struct, hashlib
mode, target, newoid = sys.argv[1], sys.argv[2].encode(), bytes.fromhex(sys.argv[3])
suffix = sys.argv[4].encode() if len(sys.argv) > 4 else b''
d = bytearray(open('.git/index','rb').read())
assert d[:4] == b'DIRC'
ver, cnt = struct.unpack('>II', d[4:12]); assert ver == 2, ver
off = 12
for i in range(cnt):
    flags = struct.unpack('>H', d[off+60:off+62])[0]
    nl = flags & 0xfff
    name = bytes(d[off+62:off+62+nl])
    size = (62 + nl + 8) & ~7
    if mode == 'namelen' and name == target:
        d[off+40:off+60] = newoid
        room = size - 62 - nl - 1
        assert len(suffix) <= room, (len(suffix), room)
        d[off+62+nl:off+62+nl+len(suffix)] = suffix
        print('patched entry', name, 'room', room)
    off += size
ext = bytes(d[off:len(d)-20])
out = bytes(d[:off])
if mode == 'namelen':
    pass  # drop extensions (cache-tree) so a commit re-hashes
else:
    p = 0; newext = b''
    while p < len(ext):
        sig, sz = ext[p:p+4], struct.unpack('>I', ext[p+4:p+8])[0]
        body = bytearray(ext[p+8:p+8+sz])
        if sig == b'TREE':
            q = 0
            while q < len(body):
                z = body.index(b'\0', q); path = bytes(body[q:z]); q = z+1
                nl_ = body.index(b'\n', q); ec, sc = body[q:nl_].split(b' '); q = nl_+1
                if int(ec) >= 0:
                    if path == target:
                        body[q:q+20] = newoid; print('patched tree', path, ec, sc)
                    q += 20
        newext += sig + struct.pack('>I', sz) + bytes(body)
        p += 8 + sz
    out += newext
out += hashlib.sha1(out).digest()
open('.git/index.new','wb').write(out)
import os; os.rename('.git/index.new', '.git/index')
