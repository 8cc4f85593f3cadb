// For users outside this repository. NOT exercised here: the repository builds
// the jar with Debian's kotlinc (make clients-kotlin) and tests it with
// go test ./clients/kotlin, because Maven Central is not reachable from our
// machines. The source compiles with Kotlin 1.3 and current Kotlin alike.
plugins {
    kotlin("jvm") version "1.9.24"
    `java-library`
}

group = "dev.linkqr"
version = "1.0.0"

repositories { mavenCentral() }

dependencies {
    api("com.google.code.gson:gson:2.10.1")
    testImplementation("org.junit.jupiter:junit-jupiter:5.9.2")
}

kotlin { jvmToolchain(11) } // java.net.http needs Java 11+

sourceSets {
    test { kotlin.srcDir("example") }
}

tasks.test {
    useJUnitPlatform()
    // The tests need a live linkqr: LINKQR_BASE_URL, LINKQR_TOKEN, LINKQR_TOKEN_LIMITED,
    // LINKQR_OAUTH_CLIENT_ID, LINKQR_OAUTH_CLIENT_SECRET (see kotlin_test.go).
}

tasks.jar { archiveFileName.set("linkqr-client.jar") }
