package dev.linkqr.example

import dev.linkqr.client.LinkqrClient
import dev.linkqr.client.ProblemException

fun main() {
    val client = LinkqrClient(System.getenv("LINKQR_BASE_URL"), System.getenv("LINKQR_API_KEY"))

    val link = client.links.create(targetUrl = "https://example.com/menu", title = "Spring menu")
    println("created ${link.shortUrl} -> ${link.targetUrl}")

    val moved = client.links.update(link.id, targetUrl = "https://example.com/summer")
    println("re-pointed ${moved.code} -> ${moved.targetUrl}")

    for (l in client.links.list(q = "menu").take(5)) println("${l.code} ${l.scanCount} ${l.title}")

    try {
        client.links.get("lnk_does_not_exist")
    } catch (e: ProblemException) {
        println("${e.status} ${e.slug}: ${e.detail} (request ${e.requestId})")
    }
}
