package etcdmember

import (
	"errors"
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"

	"github.com/leasecheck/leasecheck/internal/servers"
)

// Command is the hidden subcommand that runs the etcd server.
const Command = "etcd-server"

// dispatches is set by Dispatch: this binary runs Command.
var dispatches bool

// Dispatch runs the etcd server and exits when the process was started as
// a member (its first argument is Command), and otherwise returns, having
// noted that this binary can be a member program (Program). Call it first
// thing in main or TestMain.
func Dispatch() {
	dispatches = true
	if len(os.Args) > 1 && os.Args[1] == Command {
		// etcdmain.Main parses args[1:] as etcd's flags, serves until
		// SIGTERM or SIGINT and exits the process itself.
		etcdmain.Main(append([]string{os.Args[0] + " " + Command}, os.Args[2:]...))
		os.Exit(0)
	}
}

// Program is this binary as an etcd member program ({executable,
// [Command]}), for servers.StartEtcdClusterOf. It fails if the binary has
// not called Dispatch.
func Program() (servers.EtcdProgram, error) {
	if !dispatches {
		return servers.EtcdProgram{}, errors.New("etcd member program: this binary does not dispatch " + Command + " (etcdmember.Dispatch not called in main or TestMain)")
	}
	exe, err := os.Executable()
	if err != nil {
		return servers.EtcdProgram{}, err
	}
	return servers.EtcdProgram{Path: exe, Args: []string{Command}}, nil
}
