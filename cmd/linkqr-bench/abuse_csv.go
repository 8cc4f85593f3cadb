package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// abuseCSVBytes is the size of the scenario's CSV files: a few MB each,
// so that twenty at once would be a hundred MB held whole.
const abuseCSVBytes = 3 << 20

// abuseCSV is an import file of about abuseCSVBytes: valid rows, each
// its own target, no codes (nothing is taken, nothing is created).
func abuseCSV() []byte {
	var b bytes.Buffer
	b.WriteString("target_url,title,tags\n")
	pad := strings.Repeat("x", 150)
	for i := 0; b.Len() < abuseCSVBytes; i++ {
		fmt.Fprintf(&b, "https://example.com/abuse/%s/%d,Row %d,abuse|csv\n", pad, i, i)
	}
	return b.Bytes()
}

// uiSession is the account signed in through the web form, as a browser:
// the session cookie, and the Fetch metadata a browser sends with a
// same-origin form post (linkqr refuses cross-origin posts).
type uiSession struct {
	base    string
	cookies []*http.Cookie
}

// uiSignIn signs in with the sign-in form.
func uiSignIn(ctx context.Context, base, email, password string) (*uiSession, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Jar: jar, Timeout: time.Minute, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	s := &uiSession{base: base}
	req, err := s.form(ctx, "POST", "/login", url.Values{"email": {email}, "password": {password}})
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		return nil, fmt.Errorf("sign in as %s: %d", email, resp.StatusCode)
	}
	u, _ := url.Parse(base)
	s.cookies = jar.Cookies(u)
	if len(s.cookies) == 0 {
		return nil, fmt.Errorf("sign in as %s: no session cookie", email)
	}
	return s, nil
}

// request is a request of the signed-in browser.
func (s *uiSession) request(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, body)
	if err != nil {
		return nil, err
	}
	for _, c := range s.cookies {
		req.AddCookie(c)
	}
	req.Header.Set("Accept", "text/html")
	if method == http.MethodPost {
		req.Header.Set("Origin", s.base)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	return req, nil
}

func (s *uiSession) form(ctx context.Context, method, path string, form url.Values) (*http.Request, error) {
	req, err := s.request(ctx, method, path, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req, nil
}

// upload is the Import CSV form's post of file, as a browser sends it:
// the file, then the codes choice; with Expect: 100-continue, as curl
// sends a large body, so a refusal costs no upload.
func (s *uiSession) upload(ctx context.Context, ws string, file []byte) (*http.Request, error) {
	var head, tail bytes.Buffer
	mw := multipart.NewWriter(&head)
	if _, err := mw.CreateFormFile("file", "abuse.csv"); err != nil {
		return nil, err
	}
	boundary := mw.Boundary()
	tw := multipart.NewWriter(&tail)
	if err := tw.SetBoundary(boundary); err != nil {
		return nil, err
	}
	_ = tw.WriteField("codes", "keep")
	_ = tw.Close()
	// The shared file is read, never copied: twenty requests, one file.
	body := io.MultiReader(bytes.NewReader(head.Bytes()), bytes.NewReader(file), strings.NewReader("\r\n"), bytes.NewReader(tail.Bytes()))
	req, err := s.request(ctx, http.MethodPost, "/w/"+ws+"/links/import", body)
	if err != nil {
		return nil, err
	}
	req.ContentLength = int64(head.Len() + len(file) + 2 + tail.Len())
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Expect", "100-continue")
	return req, nil
}

// newWorkspace creates a workspace of the account through the form and
// returns its id: each round uploads into a fresh one, whose 3 waiting
// imports are still to be filled, as an account with many workspaces
// would.
func (s *uiSession) newWorkspace(ctx context.Context, client *http.Client, name string) (string, error) {
	req, err := s.form(ctx, "POST", "/w", url.Values{"name": {name}})
	if err != nil {
		return "", err
	}
	resp, err := noRedirects(client).Do(req)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`^/w/(ws_[0-9a-z]+)/links$`).FindStringSubmatch(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || m == nil {
		return "", fmt.Errorf("create workspace %q: %d %q", name, resp.StatusCode, resp.Header.Get("Location"))
	}
	return m[1], nil
}

// uploadOnce uploads file into ws and returns its import's page (the dry
// run).
func (s *uiSession) uploadOnce(ctx context.Context, client *http.Client, ws string, file []byte) (string, error) {
	req, err := s.upload(ctx, ws, file)
	if err != nil {
		return "", err
	}
	resp, err := noRedirects(client).Do(req)
	if err != nil {
		return "", err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.Contains(resp.Header.Get("Location"), "/links/import/imp_") {
		return "", fmt.Errorf("upload a CSV file: %d %q %.300s", resp.StatusCode, resp.Header.Get("Location"), b)
	}
	return resp.Header.Get("Location"), nil
}

// noRedirects is client, showing redirects rather than following them
// (an upload's 303 leads to its dry run, which is a class of its own).
func noRedirects(client *http.Client) *http.Client {
	return &http.Client{Transport: client.Transport, Timeout: client.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
