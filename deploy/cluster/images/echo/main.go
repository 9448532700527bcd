// The cluster test's workload: answers /readyz with 200 and / with the pod's name (so a test sees
// which pod a Service picked), and drains on SIGTERM. Listens on $PORT (default 8080).
// `echo get URL` is its client instead: prints the body of a GET (names resolved through the pod's
// resolv.conf, i.e. the cluster's DNS) and exits 1 unless it answered 200; with $TRIES (default 1)
// it tries that many times, a second apart, until one does.
package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func get(url string) bool {
	client := &http.Client{Timeout: 10 * time.Second}
	res, err := client.Get(url)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return false
	}
	defer res.Body.Close()
	io.Copy(os.Stdout, res.Body)
	if res.StatusCode != http.StatusOK {
		os.Stderr.WriteString(res.Status + "\n")
		return false
	}
	return true
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "get" {
		tries, err := strconv.Atoi(os.Getenv("TRIES"))
		if err != nil || tries < 1 {
			tries = 1
		}
		for i := 0; i < tries; i++ {
			if i > 0 {
				time.Sleep(time.Second)
			}
			if get(os.Args[2]) {
				return
			}
		}
		os.Exit(1)
	}
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	host, _ := os.Hostname()
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("content-type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"pod": host})
	})
	server := &http.Server{Addr: ":" + port, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		server.Shutdown(ctx)
	}()
	if err := server.ListenAndServe(); err != http.ErrServerClosed {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
}
