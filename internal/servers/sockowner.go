package servers

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// socketOwner returns which of pids holds the local end of the TCP
// connection from remote to local (both on 127.0.0.1), from Linux's
// /proc/net/tcp (the socket's inode) and /proc/PID/fd (who holds it); 0
// when none does or it cannot tell. It names the dialler of a peer
// connection that carries no member header: etcd forwards lease renewals
// and lease lookups to the leader with plain HTTP requests (leasehttp),
// which a cut between two members must stop as it stops raft's messages.
func socketOwner(remote, local net.Addr, pids []int) int {
	ra, ok1 := remote.(*net.TCPAddr)
	la, ok2 := local.(*net.TCPAddr)
	if !ok1 || !ok2 {
		return 0
	}
	// The dialler's socket: local address = remote (its port), remote = our listener.
	want := fmt.Sprintf("%s %s", procAddr(ra), procAddr(la))
	inode := ""
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 9 && fs[1]+" "+fs[2] == want {
			inode = fs[9]
			break
		}
	}
	f.Close()
	if inode == "" || inode == "0" {
		return 0
	}
	link := "socket:[" + inode + "]"
	for _, pid := range pids {
		if pid == 0 {
			continue
		}
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if l, err := os.Readlink(dir + "/" + e.Name()); err == nil && l == link {
				return pid
			}
		}
	}
	return 0
}

// procAddr is addr as /proc/net/tcp writes an IPv4 one: the address's
// bytes in host (little-endian) order, then the port, in hex.
func procAddr(a *net.TCPAddr) string {
	ip := a.IP.To4()
	if ip == nil {
		return ""
	}
	return fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], a.Port)
}
