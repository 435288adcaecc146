package webhook_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fideliza/fideliza/domain/webhook"
)

func TestGuardAllowed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ip                 string
		strict, loopbackOK bool // Allowed with Guard{} and with AllowLoopback
	}{
		{"127.0.0.1", false, true},
		{"127.1.2.3", false, true},
		{"::1", false, true},
		{"::ffff:127.0.0.1", false, true}, // IPv4-mapped loopback is loopback
		{"10.0.0.1", false, false},
		{"10.255.255.255", false, false},
		{"172.16.0.1", false, false},
		{"172.31.255.254", false, false},
		{"192.168.0.1", false, false},
		{"192.168.1.1", false, false},
		{"169.254.169.254", false, false}, // cloud metadata
		{"169.254.0.1", false, false},
		{"fe80::1", false, false},
		{"fd00:ec2::254", false, false}, // AWS metadata over IPv6 (unique local)
		{"fc00::1", false, false},
		{"100.64.0.1", false, false}, // carrier-grade NAT
		{"100.127.255.254", false, false},
		{"0.0.0.0", false, false},
		{"0.1.2.3", false, false},
		{"::", false, false},
		{"::ffff:10.0.0.1", false, false},
		{"::ffff:169.254.169.254", false, false},
		{"64:ff9b::a00:1", false, false},     // NAT64 of 10.0.0.1
		{"64:ff9b::7f00:1", false, false},    // NAT64 of 127.0.0.1: not loopback itself
		{"64:ff9b::a9fe:a9fe", false, false}, // NAT64 of 169.254.169.254
		{"2002:a00:1::", false, false},       // 6to4 of 10.0.0.1
		{"224.0.0.1", false, false},
		{"239.255.255.250", false, false},
		{"ff02::1", false, false},
		{"255.255.255.255", false, false},
		{"192.0.2.1", false, false},
		{"198.18.0.1", false, false},
		{"2001:db8::1", false, false},
		{"fec0::1", false, false},
		{"8.8.8.8", true, true},
		{"1.1.1.1", true, true},
		{"::ffff:8.8.8.8", true, true},
		{"2606:4700::1111", true, true},
		{"2001:4860:4860::8888", true, true},
	}
	for _, tt := range tests {
		ip := netip.MustParseAddr(tt.ip)
		require.Equal(t, tt.strict, webhook.Guard{}.Allowed(ip), "Guard{}.Allowed(%s)", tt.ip)
		require.Equal(t, tt.loopbackOK, webhook.Guard{AllowLoopback: true}.Allowed(ip), "AllowLoopback: Allowed(%s)", tt.ip)
	}
	require.False(t, webhook.Guard{}.Allowed(netip.Addr{}), "the zero address")
	require.False(t, webhook.Guard{AllowLoopback: true}.Allowed(netip.Addr{}))
}

func TestGuardCheckURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url                string
		strict, loopbackOK string // "" when accepted, else a part of the error
	}{
		{"https://example.com/hooks", "", ""},
		{"https://example.com:8443/hooks?tenant=1", "", ""},
		{"https://8.8.8.8/hooks", "", ""},
		{"https://[2606:4700::1111]/hooks", "", ""},
		{"http://example.com/hooks", "https", "https"}, // plain http only to loopback, when the operator allows it
		{"ftp://example.com/hooks", "https", "https"},
		{"HTTPS://example.com/hooks", "", ""},
		{"https://user:pass@example.com/hooks", "credentials", "credentials"},
		{"https://user@example.com/hooks", "credentials", "credentials"},
		{"https://example.com/hooks#part", "fragment", "fragment"},
		{"example.com/hooks", "absolute", "absolute"},
		{"/hooks", "absolute", "absolute"},
		{"", "absolute", "absolute"},
		{"mailto:ops@example.com", "absolute", "absolute"},
		{"https://", "absolute", "absolute"},
		{"https://exa mple.com/", "absolute", "absolute"},
		{"https://localhost/hooks", "localhost is a loopback address", ""},
		{"https://LOCALHOST./hooks", "localhost is a loopback address", ""},
		{"https://api.localhost/hooks", "api.localhost is a loopback address", ""},
		{"http://localhost:8080/hooks", "--webhook-allow-loopback", ""},
		{"https://127.0.0.1/hooks", "127.0.0.1 is a loopback address", ""},
		{"http://127.0.0.1:9000/hooks", "--webhook-allow-loopback", ""},
		{"https://127.0.0.2:9000/hooks", "loopback", ""},
		{"https://[::1]/hooks", "loopback", ""},
		{"https://[::ffff:127.0.0.1]/hooks", "loopback", ""},
		{"https://10.0.0.1/hooks", "not a public address", "not a public address"},
		{"https://172.16.5.4/hooks", "not a public address", "not a public address"},
		{"https://192.168.0.10/hooks", "not a public address", "not a public address"},
		{"http://169.254.169.254/latest/meta-data", "not a public address", "not a public address"},
		{"https://169.254.169.254/latest/meta-data", "not a public address", "not a public address"},
		{"https://[fe80::1]/hooks", "not a public address", "not a public address"},
		{"https://[fd00:ec2::254]/latest/meta-data", "not a public address", "not a public address"},
		{"https://100.64.0.1/hooks", "not a public address", "not a public address"},
		{"https://0.0.0.0/hooks", "not a public address", "not a public address"},
		{"https://[::ffff:10.0.0.1]/hooks", "not a public address", "not a public address"},
		{"https://[64:ff9b::a00:1]/hooks", "not a public address", "not a public address"},
	}
	for _, tt := range tests {
		for _, c := range []struct {
			g    webhook.Guard
			want string
		}{{webhook.Guard{}, tt.strict}, {webhook.Guard{AllowLoopback: true}, tt.loopbackOK}} {
			err := c.g.CheckURL(tt.url)
			if c.want == "" {
				require.NoError(t, err, "%+v CheckURL(%q)", c.g, tt.url)
			} else {
				require.ErrorContains(t, err, c.want, "%+v CheckURL(%q)", c.g, tt.url)
			}
		}
	}
}

// hitCounter is a loopback server counting the requests it gets.
func hitCounter(t *testing.T, status int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

func send(t *testing.T, g webhook.Guard, rawURL string) webhook.Result {
	t.Helper()
	return webhook.NewSender(g).Send(t.Context(), webhook.Request{
		URL: rawURL, Secrets: []string{webhook.NewSecret()}, Body: envelope(), Now: time.Now(),
	})
}

// TestGuardRefusesLoopbackConnections: without AllowLoopback the sender
// never connects to a loopback address, whether the URL names it or a host
// name resolves to it; the check is on the address dialled.
func TestGuardRefusesLoopbackConnections(t *testing.T) {
	t.Parallel()
	srv, hits := hitCounter(t, http.StatusNoContent)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	port := u.Port()

	for _, target := range []string{
		srv.URL, // http://127.0.0.1:PORT
		"http://localhost:" + port + "/hooks",
		"http://[::ffff:127.0.0.1]:" + port + "/hooks",
	} {
		res := send(t, webhook.Guard{}, target)
		require.ErrorIs(t, res.Err, webhook.ErrForbiddenAddress, target)
		require.ErrorContains(t, res.Err, "not allowed", target)
		require.Zero(t, res.StatusCode, target)
	}
	require.Zero(t, hits.Load(), "the server is never reached")

	// The same server with loopback allowed: reached, so the refusals above
	// were the guard's.
	res := send(t, webhook.Guard{AllowLoopback: true}, "http://localhost:"+port+"/hooks")
	require.NoError(t, res.Err)
	require.EqualValues(t, 1, hits.Load())
}

// TestGuardRefusesPrivateConnections: addresses that would reach the
// service's own network are refused before any packet leaves, loopback
// allowed or not. Nothing listens there; the error says why.
func TestGuardRefusesPrivateConnections(t *testing.T) {
	t.Parallel()
	for _, target := range []string{
		"http://10.0.0.1/hooks",
		"http://172.16.0.1/hooks",
		"http://192.168.1.1/hooks",
		"http://169.254.169.254/latest/meta-data",
		"http://[fe80::1]/hooks",
		"http://[fd00:ec2::254]/latest/meta-data",
		"http://100.64.0.1/hooks",
		"http://0.0.0.0/hooks",
		"http://[::ffff:10.0.0.1]/hooks",
		"http://[64:ff9b::a00:1]/hooks",
	} {
		started := time.Now()
		res := send(t, webhook.Guard{AllowLoopback: true}, target)
		require.ErrorIs(t, res.Err, webhook.ErrForbiddenAddress, target)
		require.Less(t, time.Since(started), 2*time.Second, "refused at once, not after a connect timeout: %s", target)
	}
}

// TestGuardRefusesRedirectsToPrivateTargets: an allowed server answering a
// redirect to a private address, cloud metadata or another (loopback)
// server is not followed; the attempt fails and the target sees nothing.
func TestGuardRefusesRedirectsToPrivateTargets(t *testing.T) {
	t.Parallel()
	target, targetHits := hitCounter(t, http.StatusOK)
	for _, location := range []string{
		"http://10.0.0.1/",
		"http://169.254.169.254/latest/meta-data",
		"http://[fd00:ec2::254]/latest/meta-data",
		"http://localhost/admin",
		target.URL + "/internal",
	} {
		var hits atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			http.Redirect(w, r, location, http.StatusFound)
		}))
		res := send(t, webhook.Guard{AllowLoopback: true}, srv.URL+"/hooks")
		srv.Close()
		require.EqualValues(t, 1, hits.Load(), location)
		require.Equal(t, http.StatusFound, res.StatusCode, location)
		require.ErrorContains(t, res.Err, "redirect", location)
		require.NotErrorIs(t, res.Err, webhook.ErrForbiddenAddress, "no connection to the target was even tried: %s", location)
	}
	require.Zero(t, targetHits.Load(), "no request reaches the redirect target")
}

// TestGuardUsesNoProxy: a proxy set in the environment would connect on the
// sender's behalf, unchecked; the sender ignores it.
func TestGuardUsesNoProxy(t *testing.T) {
	proxy, proxyHits := hitCounter(t, http.StatusOK)
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	res := send(t, webhook.Guard{}, "http://10.0.0.1/hooks")
	require.ErrorIs(t, res.Err, webhook.ErrForbiddenAddress)
	require.Zero(t, proxyHits.Load())
}

// TestGuardDialsResolvedAddresses checks the dial-time control directly on
// a listener the guard allows and one it does not.
func TestGuardDialsResolvedAddresses(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	res := send(t, webhook.Guard{}, "http://"+addr+"/")
	require.ErrorIs(t, res.Err, webhook.ErrForbiddenAddress)
	require.True(t, strings.Contains(res.Err.Error(), "127.0.0.1"), res.Err.Error())
	time.Sleep(50 * time.Millisecond) // a connection, had one been made, is accepted meanwhile: nothing to wait on
	require.Zero(t, accepted.Load(), "refused before connecting")
}
