package dev.linkqr.client

import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.Clock
import java.time.Duration
import java.time.Instant
import java.time.ZoneId
import java.util.Collections
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

// What clients/kotlin/kotlin_test.go hands these tests: a linkqr started for
// the run, keys minted for it and an OAuth client-credentials client.
private fun need(name: String): String =
    System.getenv(name) ?: throw IllegalStateException("$name is not set: run these tests through go test ./clients/kotlin")

private val baseUrl = need("LINKQR_BASE_URL")
private val token = need("LINKQR_TOKEN")
private val run = "kt-" + ProcessHandle.current().pid() + "-" + System.nanoTime()

private fun client(opts: ClientOptions = ClientOptions()) = LinkqrClient(baseUrl, token, opts)

/** eventually polls check until it returns a value, or fails after a minute. */
private fun <T> eventually(what: String, check: () -> T?): T {
    val deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos()
    while (true) {
        val v = check()
        if (v != null) return v
        if (System.nanoTime() > deadline) throw AssertionError("timed out waiting for $what")
        Thread.sleep(50)
    }
}

class ClientTest {
    @Test
    fun createWithAnIdempotencyKeyAndReplayIt() {
        val lq = client()
        val key = "create-$run"
        val first = lq.links.create(targetUrl = "https://example.com/menu", title = "menu $run", idempotencyKey = key)
        assertTrue(first.id.startsWith("lnk_"), first.id)
        assertEquals("https://example.com/menu", first.targetUrl)
        assertEquals("menu $run", first.title)
        assertEquals(null, first.expiresAt)
        val again = lq.links.create(targetUrl = "https://example.com/menu", title = "menu $run", idempotencyKey = key)
        assertEquals(first, again)

        val e = assertThrows(ProblemException::class.java) {
            lq.links.create(targetUrl = "https://example.com/menu", title = "other", idempotencyKey = key)
        }
        assertEquals(422, e.status)
        assertEquals("idempotency-key-reused", e.slug)

        // Without a key every POST still carries a fresh one: two calls, two links.
        val a = lq.links.create(targetUrl = "https://example.com/menu", title = "nokey $run")
        val b = lq.links.create(targetUrl = "https://example.com/menu", title = "nokey $run")
        assertNotEquals(a.id, b.id)
    }

    @Test
    fun paginateWithFilters() {
        val lq = client()
        val made = (0 until 7).map { lq.links.create(targetUrl = "https://example.com/$it", title = "page $run").id }
        val pagesSeen = lq.links.listPage(q = "page $run", limit = 3)
        assertEquals(3, pagesSeen.data.size)
        assertTrue(pagesSeen.hasMore)
        val seen = lq.links.list(q = "page $run", limit = 3).toList()
        assertEquals(made.reversed(), seen.map { it.id }, "every link once, newest first")
        assertTrue(lq.links.list(q = "page $run").all { it.title == "page $run" })

        lq.links.update(made[2], status = "paused")
        assertEquals(listOf(made[2]), lq.links.list(q = "page $run", status = "paused").map { it.id }.toList())
        assertEquals(6, lq.links.list(q = "page $run", status = "active").count())
    }

    @Test
    fun tagsBulkAndExport() {
        val lq = client()
        val tag = "tag-$run"
        val one = lq.links.create(targetUrl = "https://example.com/t1", title = "tags $run", tags = listOf(tag))
        assertEquals(listOf(tag), one.tags)
        val bulk = lq.links.createMany(listOf(
            LinkInput("https://example.com/t2", title = "tags $run", tags = listOf(tag)),
            LinkInput("https://example.com/t3", code = one.code)))
        assertEquals("bulk_result", bulk.`object`)
        assertEquals(1, bulk.created)
        assertEquals(1, bulk.failed)
        assertEquals(201, bulk.data[0].status)
        assertEquals(listOf(tag), bulk.data[0].link!!.tags)
        assertEquals(409, bulk.data[1].status)
        assertEquals(null, bulk.data[1].link)
        assertEquals(409, bulk.data[1].problem()!!.status)

        assertEquals(setOf(one.id, bulk.data[0].link!!.id), lq.links.list(tag = listOf(tag)).map { it.id }.toSet())
        val found = lq.links.tags(limit = 100).first { it.name == tag }
        assertEquals("tag", found.`object`)
        assertEquals(2L, found.linkCount)
        val csv = lq.links.export(tag = listOf(tag))
        assertTrue(csv.startsWith("id,code,domain,short_url,target_url,"), csv)
        assertEquals(3, csv.trim().lines().size, csv)
        assertTrue(csv.contains(one.code), csv)

        assertEquals(emptyList<String>(), lq.links.update(one.id, tags = emptyList()).tags)

        val ids = listOf(one.id, bulk.data[0].link!!.id)
        val edited = lq.links.editMany(ids + "lnk_nope", addTags = listOf("edited"), removeTags = listOf(tag), status = "paused")
        assertEquals("list", edited.`object`)
        assertEquals(listOf(200, 200, 422), edited.data.map { it.status })
        assertEquals(listOf("edited"), edited.data[1].link!!.tags)
        assertEquals("paused", edited.data[0].link!!.status)
        assertEquals(422, edited.data[2].problem()!!.status)
        val gone = lq.links.deleteMany(ids)
        assertEquals(listOf(200, 200), gone.data.map { it.status })
    }

    @Test
    fun utmParameters() {
        val lq = client()
        val link = lq.links.create(targetUrl = "https://example.com/menu?utm_source=typed#top", title = "utm $run",
            utmSource = "newsletter", utmMedium = "email")
        assertEquals("newsletter", link.utmSource)
        assertEquals("email", link.utmMedium)
        assertEquals(null, link.utmCampaign)
        assertEquals("https://example.com/menu?utm_source=typed#top", link.targetUrl)
        val http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build()
        val res = http.send(HttpRequest.newBuilder(URI.create(link.shortUrl)).build(), HttpResponse.BodyHandlers.discarding())
        assertEquals("https://example.com/menu?utm_source=newsletter&utm_medium=email#top", res.headers().firstValue("Location").orElse(null))
        val updated = lq.links.update(link.id, clearUtmSource = true, utmCampaign = "spring sale")
        assertEquals(null, updated.utmSource)
        assertEquals("email", updated.utmMedium)
        assertEquals("spring sale", updated.utmCampaign)
        val bulk = lq.links.createMany(listOf(LinkInput("https://example.com/bulk-utm", utmContent = "banner")))
        assertEquals("banner", bulk.data[0].link!!.utmContent)
    }

    @Test
    fun targetingRulesSplitPasswordAndScanLimit() {
        val lq = client()
        val link = lq.links.create(targetUrl = "https://example.com/default", title = "rules $run",
            rules = listOf(LinkRule(LinkRuleCondition(device = listOf("mobile")), "https://example.com/mobile")),
            split = listOf(SplitVariant("https://example.com/a", 50), SplitVariant("https://example.com/b", 50)),
            maxScans = 100)
        assertEquals("https://example.com/mobile", link.rules!![0].targetUrl)
        assertEquals(listOf("mobile"), link.rules!![0].`if`.device)
        assertEquals(null, link.rules!![0].`if`.os)
        assertEquals(2, link.split!!.size)
        assertEquals(100L, link.maxScans)
        assertEquals(false, link.passwordProtected)

        val http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build()
        val res = http.send(HttpRequest.newBuilder(URI.create(link.shortUrl))
            .header("User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1")
            .build(), HttpResponse.BodyHandlers.discarding())
        assertEquals("https://example.com/mobile", res.headers().firstValue("Location").orElse(null))
        val scan = eventually("the scan in the list") { lq.links.scans(link.id).firstOrNull() }
        assertEquals("rule:0", scan.variant)
        val stats = eventually("the scan in analytics") { lq.links.analytics(link.id).takeIf { it.total >= 1 } }
        assertEquals("rule:0", stats.variants!!.first().key)

        val locked = lq.links.update(link.id, password = "open sesame", clearRules = true, clearSplit = true, clearMaxScans = true)
        assertEquals(true, locked.passwordProtected)
        assertEquals(null, locked.rules)
        assertEquals(null, locked.split)
        assertEquals(null, locked.maxScans)
        assertEquals(false, lq.links.update(link.id, clearPassword = true).passwordProtected)
    }

    @Test
    fun repointScanAndReadAnalytics() {
        val lq = client()
        val link = lq.links.create(targetUrl = "https://example.com/spring", title = "repoint $run")
        val moved = lq.links.update(link.id, targetUrl = "https://example.com/summer", title = "summer $run")
        assertEquals("https://example.com/summer", moved.targetUrl)
        assertEquals(link.code, moved.code)
        assertEquals(null, lq.links.update(link.id, clearTitle = true).title)

        val http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build()
        val res = http.send(HttpRequest.newBuilder(URI.create(link.shortUrl))
            .header("User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1")
            .build(), HttpResponse.BodyHandlers.discarding())
        assertEquals(302, res.statusCode())
        assertEquals("https://example.com/summer", res.headers().firstValue("Location").orElse(null))

        val stats = eventually("the scan in analytics") {
            lq.links.analytics(link.id, interval = "day").takeIf { it.total >= 1 }
        }
        assertEquals("analytics", stats.`object`)
        assertEquals(link.id, stats.linkId)
        assertEquals(1L, stats.total)
        assertEquals(1L, stats.series.map { it.scans }.sum())
        assertEquals("mobile", stats.devices.first().key)
        val scans = eventually("the scan in the list") { lq.links.scans(link.id).toList().takeIf { it.isNotEmpty() } }
        assertEquals(link.id, scans.first().linkId)

        val png = lq.links.qr(link.id, size = 128)
        assertEquals(listOf(0x89, 0x50, 0x4e, 0x47), png.take(4).map { it.toInt() and 0xff })
        assertTrue(String(lq.links.qr(link.id, format = "svg"), Charsets.UTF_8).contains("<svg"))
    }

    @Test
    fun scansCarrySourceAndCountryAndAnalyticsBreakThemDown() {
        val lq = client()
        val link = lq.links.create(targetUrl = "https://example.com/geo", title = "geo $run")
        val http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build()
        // As the QR code encodes it, then the short URL as shared; the
        // redirect strips qr=1, so the target never sees it.
        for (url in listOf(link.shortUrl + "?qr=1", link.shortUrl)) {
            val res = http.send(HttpRequest.newBuilder(URI.create(url))
                .header("User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1")
                .build(), HttpResponse.BodyHandlers.discarding())
            assertEquals(302, res.statusCode())
            assertEquals("https://example.com/geo", res.headers().firstValue("Location").orElse(null))
        }

        val scans = eventually("both scans listed") { lq.links.scans(link.id).toList().takeIf { it.size == 2 } }
        assertEquals(listOf("link", "qr"), scans.map { it.source }, "newest first")
        assertEquals(listOf<String?>(null, null), scans.map { it.country }, "loopback has no country")

        val stats = eventually("both scans in analytics") {
            lq.links.analytics(link.id).takeIf { it.total == 2L }
        }
        assertEquals(listOf(AnalyticsCount("(unknown)", 2)), stats.countries)
        assertEquals(listOf(AnalyticsCount("link", 1), AnalyticsCount("qr", 1)), stats.sources)
    }

    @Test
    fun qrDesigns() {
        val lq = client()
        val link = lq.links.create(targetUrl = "https://example.com/design", title = run)
        assertEquals(null, lq.links.qrDesign(link.id).linkId)
        val own = lq.links.setQrDesign(link.id, fg = "1A237E", modules = "dots", frame = QRFrameInput("Scan me"))
        assertEquals(link.id, own.linkId)
        assertEquals("dots", own.modules)
        assertEquals(QRFrame("Scan me", "1A237E"), own.frame)
        assertTrue(String(lq.links.qr(link.id, format = "svg")).contains(">Scan me</text>"))
        assertEquals("%PDF", String(lq.links.qr(link.id, format = "pdf").copyOfRange(0, 4)))
        val unreadable = assertThrows(ProblemException::class.java) { lq.links.setQrDesign(link.id, margin = 0) }
        assertEquals("qr-unreadable", unreadable.slug)
        assertEquals(own, lq.links.qrDesign(link.id))
        assertEquals("PK", String(lq.links.qrZip(id = listOf(link.id), format = "svg").copyOfRange(0, 2)))
        lq.links.deleteQrDesign(link.id)
        assertEquals(null, lq.links.qrDesign(link.id).linkId)
        assertEquals("qr_design", lq.links.defaultQrDesign().`object`)
    }

    @Test
    fun problemsAreTyped() {
        val lq = client()
        val missing = assertThrows(ProblemException::class.java) { lq.links.get("lnk_nope") }
        assertEquals(404, missing.status)
        assertEquals("not-found", missing.slug)
        assertTrue(missing.type.endsWith("/problems/not-found"), missing.type)
        assertTrue(!missing.requestId.isNullOrBlank())

        val invalid = assertThrows(ProblemException::class.java) { lq.links.create(targetUrl = "ftp://example.com/x") }
        assertEquals(422, invalid.status)
        assertEquals("validation-failed", invalid.slug)
        assertEquals(listOf("/target_url"), invalid.errors.map { it.pointer })
        val size = assertThrows(ProblemException::class.java) {
            lq.links.qr(lq.links.create(targetUrl = "https://example.com/qr").id, size = 10)
        }
        assertEquals("/query/size", size.errors.first().pointer)
    }

    @Test
    fun rateLimitedIsRetriedAfterRetryAfter() {
        val limited = need("LINKQR_TOKEN_LIMITED")
        val retries = Collections.synchronizedList(ArrayList<RetryInfo>())
        val lq = LinkqrClient(baseUrl, limited, ClientOptions(onRetry = { retries.add(it) }))
        // The key allows a burst of 60, then one request a second; bounded
        // generously as the allowance refills while the loop runs.
        var i = 0
        while (i < 300 && retries.isEmpty()) {
            assertEquals("list", lq.links.listPage(limit = 1).`object`)
            i++
        }
        assertEquals(429, retries.first().status)
        assertTrue(retries.first().delay >= Duration.ofSeconds(1), retries.first().toString())

        val impatient = LinkqrClient(baseUrl, limited, ClientOptions(maxRetries = 0))
        val e = assertThrows(ProblemException::class.java) {
            for (n in 0 until 100) impatient.links.listPage(limit = 1)
        }
        assertEquals(429, e.status)
        assertEquals("rate-limited", e.slug)
        assertTrue((e.retryAfter ?: 0) >= 1)
    }

    @Test
    fun aPostRetriedAfterA503ReusesItsKeySoTheServerActsOnce() {
        // A proxy that forwards to linkqr but replaces the first POST's answer
        // by a 503, as a failing load balancer would after the server acted.
        val keys = Collections.synchronizedList(ArrayList<String>())
        val upstream = HttpClient.newHttpClient()
        val proxy = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
        proxy.createContext("/") { ex ->
            val body = ex.requestBody.readBytes()
            val b = HttpRequest.newBuilder(URI.create(baseUrl + ex.requestURI))
                .method(ex.requestMethod, HttpRequest.BodyPublishers.ofByteArray(body))
            for (h in listOf("Authorization", "Content-Type", "Idempotency-Key")) {
                ex.requestHeaders.getFirst(h)?.let { b.header(h, it) }
            }
            val res = upstream.send(b.build(), HttpResponse.BodyHandlers.ofByteArray())
            var status = res.statusCode()
            var out = res.body()
            if (ex.requestMethod == "POST") {
                keys.add(ex.requestHeaders.getFirst("Idempotency-Key") ?: "")
                if (keys.size == 1) {
                    status = 503
                    out = "{\"type\":\"about:blank\",\"title\":\"Unavailable\",\"status\":503,\"detail\":\"lost\"}".toByteArray()
                    ex.responseHeaders.add("Retry-After", "0")
                }
            }
            ex.responseHeaders.add("Content-Type", res.headers().firstValue("Content-Type").orElse("application/json"))
            ex.sendResponseHeaders(status, out.size.toLong())
            ex.responseBody.use { it.write(out) }
        }
        proxy.start()
        try {
            val lq = LinkqrClient("http://127.0.0.1:" + proxy.address.port, token)
            val link = lq.links.create(targetUrl = "https://example.com/once", title = "once $run")
            assertEquals(2, keys.size)
            assertEquals(keys[0], keys[1])
            assertTrue(Regex("[0-9a-f-]{36}").matches(keys[0]), keys[0])
            assertEquals(listOf(link.id), client().links.list(q = "once $run").map { it.id }.toList(), "one link, not two")
        } finally {
            proxy.stop(0)
        }
    }

    @Test
    fun workspaceAndWebhookCrud() {
        val lq = client()
        val ws = lq.workspace()
        assertEquals("workspace", ws.`object`)
        assertTrue(ws.scopes.contains("webhooks:write"))
        val hook = lq.webhooks.create("http://127.0.0.1:9/crud", listOf("link.updated"), description = "crud $run")
        val changed = lq.webhooks.update(hook.id, events = listOf("link.updated", "link.deleted"), clearDescription = true)
        assertEquals(listOf("link.updated", "link.deleted"), changed.events)
        assertEquals(null, changed.description)
        assertEquals(changed, lq.webhooks.get(hook.id))
        assertTrue(lq.webhooks.list().any { it.id == hook.id })
        lq.webhooks.delete(hook.id)
        assertEquals(404, assertThrows(ProblemException::class.java) { lq.webhooks.get(hook.id) }.status)
    }

    /** A clock the test moves forward. */
    private class MovableClock : Clock() {
        @Volatile var offset: Duration = Duration.ZERO
        override fun getZone(): ZoneId = ZoneId.of("UTC")
        override fun withZone(zone: ZoneId?): Clock = this
        override fun instant(): Instant = Instant.now().plus(offset)
    }

    @Test
    fun oauthClientCredentialsTokenIsCachedAndRefreshedBeforeExpiry() {
        val clock = MovableClock()
        val cc = ClientCredentials(baseUrl, need("LINKQR_OAUTH_CLIENT_ID"), need("LINKQR_OAUTH_CLIENT_SECRET"), clock = clock)
        val lq = LinkqrClient(baseUrl, cc)
        val ws = lq.workspace()
        assertEquals(listOf("links:read", "links:write"), ws.scopes)
        val link = lq.links.create(targetUrl = "https://example.com/oauth", title = "oauth $run")
        assertEquals(link, lq.links.get(link.id))
        assertEquals(1, cc.fetches, "one token for three calls")
        val first = cc.token()

        // 15-minute tokens are replaced a minute before they expire.
        clock.offset = Duration.ofMinutes(14).plusSeconds(30)
        assertEquals(link.id, lq.links.get(link.id).id)
        assertEquals(2, cc.fetches)
        assertNotEquals(first, cc.token())

        val forbidden = assertThrows(ProblemException::class.java) { lq.webhooks.list().toList() }
        assertEquals("insufficient-scope", forbidden.slug)
        assertEquals("webhooks:read", forbidden.requiredScope)

        val bad = ClientCredentials(baseUrl, need("LINKQR_OAUTH_CLIENT_ID"), "wrong")
        val e = assertThrows(OAuthException::class.java) { LinkqrClient(baseUrl, bad).workspace() }
        assertEquals("invalid_client", e.error)
    }
}
