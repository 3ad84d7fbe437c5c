// Command etcd is the etcd server at the version k8s.io/kubernetes pins,
// built from go.etcd.io/etcd/server/v3 for the test cluster.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
