package hostile

import (
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// form is one <form> of a page as a browser would submit it.
type form struct {
	method  string // GET or POST
	action  *url.URL
	enctype string
	fields  []field
}

// field is one successful control of a form (what a browser sends when the
// form is submitted as rendered), or a control that a user fills in.
type field struct {
	name, value string
	kind        string // input type, "textarea", "select" or "button"
	required    bool
	min         string
	checked     bool // checkbox or radio: sent only when checked
}

// page is what the walk needs of an HTML page: its forms and links.
type page struct {
	forms []form
	links []*url.URL
}

// parsePage reads the forms and the <a href> links of an HTML page at base.
func parsePage(base *url.URL, r io.Reader) (page, error) {
	root, err := html.Parse(r)
	if err != nil {
		return page{}, err
	}
	var p page
	var cur *form
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "a":
				if href, ok := attr(n, "href"); ok {
					if u, err := base.Parse(href); err == nil {
						p.links = append(p.links, u)
					}
				}
			case "form":
				f := form{method: strings.ToUpper(attrOr(n, "method", "GET")), enctype: attrOr(n, "enctype", "application/x-www-form-urlencoded")}
				f.action = base
				if a, ok := attr(n, "action"); ok {
					if u, err := base.Parse(a); err == nil {
						f.action = u
					}
				}
				if f.method != "POST" {
					f.method = "GET"
				}
				p.forms = append(p.forms, f)
				cur = &p.forms[len(p.forms)-1]
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
				cur = nil
				return
			case "input", "textarea", "select", "button":
				if cur != nil {
					if f, ok := control(n); ok {
						cur.fields = append(cur.fields, f)
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return p, nil
}

// control reads a named, enabled form control.
func control(n *html.Node) (field, bool) {
	name, ok := attr(n, "name")
	if !ok || name == "" {
		return field{}, false
	}
	if _, disabled := attr(n, "disabled"); disabled {
		return field{}, false
	}
	_, required := attr(n, "required")
	f := field{name: name, required: required, min: attrOr(n, "min", "")}
	switch n.Data {
	case "input":
		f.kind = strings.ToLower(attrOr(n, "type", "text"))
		f.value = attrOr(n, "value", "")
		_, f.checked = attr(n, "checked")
		switch f.kind {
		case "submit", "image":
			f.kind, f.value = "button", attrOr(n, "value", "")
		case "reset", "button", "file":
			return field{}, false
		case "checkbox", "radio":
			if _, ok := attr(n, "value"); !ok {
				f.value = "on"
			}
		}
	case "textarea":
		f.kind = "textarea"
		f.value = strings.TrimPrefix(text(n), "\n") // the parser's rule for a leading newline
	case "select":
		f.kind = "select"
		first, chosen := "", false
		var options func(*html.Node)
		options = func(c *html.Node) {
			for o := c.FirstChild; o != nil; o = o.NextSibling {
				if o.Type == html.ElementNode && o.Data == "option" {
					v, ok := attr(o, "value")
					if !ok {
						v = strings.TrimSpace(text(o))
					}
					if first == "" {
						first = v
					}
					if _, sel := attr(o, "selected"); sel && !chosen {
						f.value, chosen = v, true
					}
				}
				options(o)
			}
		}
		options(n)
		if !chosen {
			f.value = first
		}
	case "button":
		if t := strings.ToLower(attrOr(n, "type", "submit")); t != "submit" {
			return field{}, false
		}
		f.kind, f.value = "button", attrOr(n, "value", "")
	}
	return f, true
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func attrOr(n *html.Node, key, def string) string {
	if v, ok := attr(n, key); ok {
		return v
	}
	return def
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
		for k := c.FirstChild; k != nil; k = k.NextSibling {
			walk(k)
		}
	}
	walk(n)
	return b.String()
}
