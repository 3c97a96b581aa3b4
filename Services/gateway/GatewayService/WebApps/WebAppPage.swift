import Geo

/// The two apps' HTML: one shell (header, notice, the log-in form, the map) around each app's own
/// part. No inline script or style: the pages load `/app/app.css`, `/app/app.js` and their own
/// script, which the apps' content security policy allows (`'self'`, nothing inline).
/// The city's centre rides on `<body>` as `data-latitude` / `data-longitude`: where the map opens.
enum WebAppPage {
    enum App: String, CaseIterable, Sendable {
        case rider, driver

        var title: String { self == .rider ? "Ride — rider" : "Ride — driver" }
    }

    static func html(_ app: App, centre: GeoPoint) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(app.title)</title>
        <link rel="stylesheet" href="/app/app.css">
        <script src="/app/app.js" defer></script>
        <script src="/app/\(app.rawValue).js" defer></script>
        </head>
        <body data-latitude="\(centre.latitude)" data-longitude="\(centre.longitude)">
        <header><h1>\(app == .rider ? "Ride" : "Ride · Driver")</h1><span id="who"></span><button id="log-out" type="button" hidden>Log out</button></header>
        <p id="notice" class="notice" role="status" aria-live="polite"></p>
        <main>
        <form id="sign-in" aria-label="Log in or sign up">
          <label for="phone">Phone number</label><input id="phone" type="tel" autocomplete="tel" required>
          <label for="password">Password</label><input id="password" type="password" autocomplete="current-password" minlength="8" required>
          <label for="name">Your name (to sign up)</label><input id="name" autocomplete="name">
        \(app == .driver ? """
          <label for="car-make">Car make (to sign up)</label><input id="car-make">
          <label for="car-model">Car model (to sign up)</label><input id="car-model">
          <label for="car-color">Car colour (to sign up)</label><input id="car-color">
          <label for="car-plate">Licence plate (to sign up)</label><input id="car-plate">
        """ : "")
          <div class="actions"><button id="log-in" type="submit">Log in</button><button id="sign-up" type="submit" class="secondary">Sign up</button></div>
        </form>
        <div id="app" hidden>
        <svg id="map" viewBox="0 0 600 400" role="img" aria-label="\(app == .rider ? "map of the streets: tap to choose the drop-off" : "map of the streets, you and your route")"></svg>
        \(app == .rider ? riderPart : driverPart)
        </div>
        </main>
        </body>
        </html>
        """
    }

    static let chat = """
        <section class="card" aria-label="chat"><h3>Chat</h3><ol id="messages"></ol>
          <form id="chat-form"><label for="chat-text">Message</label><input id="chat-text" maxlength="1000"><button type="submit">Send</button></form>
        </section>
        """

    static let riderPart = """
        <section id="booking">
          <p id="cars" class="muted">Looking for cars nearby…</p>
          <label for="search">Where to?</label><input id="search" type="search" autocomplete="off" placeholder="a street, an address or a place">
          <ul id="results" class="choices" aria-label="places found"></ul>
          <ul id="saved" class="choices" aria-label="saved places"></ul>
          <p>Pickup: <span id="pickup"></span><br>Drop-off: <span id="dropoff">tap the map or search</span></p>
          <p id="quote" aria-live="polite"></p>
          <div class="actions"><button id="book" type="button" disabled>Book this ride</button><button id="save-place" type="button" class="secondary" disabled>Save the drop-off</button></div>
        </section>
        <section id="ride" hidden>
          <h2 id="status" aria-live="polite"></h2><p id="driver"></p><p id="eta"></p>
          <div class="actions"><button id="cancel" type="button" class="secondary">Cancel the ride</button><button id="share" type="button" class="secondary">Share the ride</button></div>
          <p><a id="share-link" target="_blank" rel="noopener"></a></p>
          <section id="summary" class="card" hidden><h3>Your ride</h3><p id="summary-text"></p><p id="payment"></p>
            <button id="pay-again" type="button" hidden>Pay again</button>
            <fieldset id="rating"><legend>Rate your driver</legend>
              <button type="button" data-stars="1" aria-label="1 star">★1</button><button type="button" data-stars="2" aria-label="2 stars">★2</button><button type="button" data-stars="3" aria-label="3 stars">★3</button><button type="button" data-stars="4" aria-label="4 stars">★4</button><button type="button" data-stars="5" aria-label="5 stars">★5</button>
            </fieldset>
            <button id="done" type="button">Done</button>
          </section>
        \(chat)
        </section>
        <section class="card"><h3>Your rides</h3><ol id="history"></ol><h3>Cards</h3><ul id="cards"></ul>
          <button id="add-card" type="button" class="secondary" hidden>Add a card</button></section>
        """

    static let driverPart = """
        <section id="duty" class="card">
          <label class="switch"><input id="online" type="checkbox"> Online for offers</label>
          <div class="actions"><button id="gps" type="button" class="secondary">Use my location</button><button id="drive" type="button" class="secondary">Drive along the route</button></div>
        </section>
        <ul id="offers" class="offers" aria-label="offers"></ul>
        <section id="ride" hidden>
          <h2 id="status" aria-live="polite"></h2><p id="rider"></p><p id="eta"></p>
          <ol id="steps" aria-label="the way, turn by turn"></ol>
          <div class="actions"><button id="arrive" type="button">I have arrived</button><button id="start" type="button">Start the ride</button><button id="end" type="button">End the ride</button><button id="close" type="button" class="secondary">Close</button></div>
        \(chat)
        </section>
        <section class="card"><h3>Earnings</h3><ul id="earnings"></ul></section>
        """
}
