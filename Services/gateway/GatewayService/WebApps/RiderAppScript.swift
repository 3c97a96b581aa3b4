/// `/app/rider.js`: the rider app — cars nearby, a drop-off from a search or a tap, the quote,
/// booking, the ride live (driver, ETA, delays), chat, cancel, share, the summary, payment,
/// rating, history, saved places and cards. An open ride is found again after a reload.
enum RiderAppScript {
    static let source = #"""
        "use strict";
        const labels = {
          NEW: "Finding a driver…", ACCEPTED: "A driver accepted", PICKING_UP: "Your driver is on the way",
          REACHED_PICKUP: "Your driver is at the pickup", STARTED_RIDE: "On the way to the drop-off",
          DROPPING_OFF: "On the way to the drop-off", REACHED_DROPOFF: "At the drop-off",
          COMPLETED: "Ride completed", CANCELLED: "Ride cancelled"
        };
        const state = {pickup: App.centre(), dropoff: null, order: null, cars: [], driverAt: null, route: [], notes: null, orderSocket: null};
        const map = new App.StreetMap($("map"), App.centre());

        function draw() {
          map.drawStreets();
          map.marker("pickup-marker", state.pickup[0], state.pickup[1], "pickup");
          if (state.dropoff) map.marker("dropoff-marker", state.dropoff.latitude, state.dropoff.longitude, "drop-off"); else map.remove("dropoff-marker");
          document.querySelectorAll("[id^=car-]").forEach((e) => e.remove());
          if (!state.order) state.cars.forEach((c, i) => map.marker("car-" + i, c.latitude, c.longitude, "a car nearby"));
          if (state.driverAt) map.marker("driver-marker", state.driverAt[0], state.driverAt[1], "your driver"); else map.remove("driver-marker");
          map.line("route", state.route);
        }

        function watchNearby() {
          if (!state.notes || state.order) return;
          const query = {latitude: state.pickup[0], longitude: state.pickup[1]};
          if (state.dropoff) Object.assign(query, {dropoff_latitude: state.dropoff.latitude, dropoff_longitude: state.dropoff.longitude});
          state.notes.send({watch_nearby: query});
        }

        function onNotification(message) {
          if (message.type === "nearby_cars") {
            const near = message.nearby_cars;
            state.cars = near.cars || [];
            $("cars").textContent = near.count ? `${near.count} car${near.count === 1 ? "" : "s"} nearby` + (near.pickup_eta_s ? `, the nearest ${App.minutes(near.pickup_eta_s)} away` : "") : "No cars nearby right now.";
            if (near.quote) $("quote").textContent = `${App.money(near.quote.total_cents, near.quote.currency)} · ${(near.quote.distance_m / 1000).toFixed(1)} km · ${App.minutes(near.quote.duration_s)}` + (near.quote.surge > 1 ? ` · busy: ×${near.quote.surge}` : "");
            draw();
          } else if (message.type === "notification") {
            const n = message.notification;
            if (n.kind === "trip_delayed" || n.kind === "driver_arriving" || n.kind === "payment_failed") App.say(`${n.title}: ${n.body}`);
          } else if (message.type === "error") {
            App.say(message.error.message, "error");
          }
        }

        function setDropoff(place) {
          state.dropoff = place;
          $("dropoff").textContent = place.address || `${place.latitude.toFixed(5)}, ${place.longitude.toFixed(5)}`;
          $("book").disabled = false; $("save-place").disabled = false;
          $("quote").textContent = "Getting a quote…";
          if (map.fit([state.pickup, [place.latitude, place.longitude]])) setTimeout(draw, 300);
          watchNearby(); draw();
        }

        map.onTap(async ([latitude, longitude]) => {
          if (state.order) return;
          setDropoff({latitude, longitude});
          try {
            const found = await App.api("GET", `/places/reverse?latitude=${latitude}&longitude=${longitude}`);
            if (state.dropoff && state.dropoff.latitude === latitude) setDropoff({latitude, longitude, address: found.address});
          } catch (e) { /* no address: the point is enough */ }
        });

        let searching;
        $("search").addEventListener("input", () => {
          clearTimeout(searching);
          const q = $("search").value.trim();
          if (!q) { $("results").replaceChildren(); return; }
          searching = setTimeout(async () => {
            try {
              const reply = await App.api("GET", `/places/search?q=${encodeURIComponent(q)}&latitude=${state.pickup[0]}&longitude=${state.pickup[1]}&limit=5`);
              $("results").replaceChildren(...reply.places.map((p) => placeButton(p.name + " — " + p.address, {latitude: p.latitude, longitude: p.longitude, address: p.address})));
            } catch (e) { App.say("Search: " + e.message, "error"); }
          }, 250);
        });

        function placeButton(text, place) {
          const item = document.createElement("li"), button = App.text("button", text);
          button.type = "button";
          button.addEventListener("click", () => { setDropoff(place); $("results").replaceChildren(); $("search").value = ""; });
          item.appendChild(button);
          return item;
        }

        async function loadPlaces() {
          try {
            const reply = await App.api("GET", "/me/places");
            $("saved").replaceChildren(...(reply.places || []).map((p) => placeButton(`★ ${p.name}`, p.place)));
          } catch (e) { /* shown empty */ }
        }

        $("save-place").addEventListener("click", async () => {
          if (!state.dropoff) return;
          try {
            await App.api("POST", "/me/places", {label: "other", name: (state.dropoff.address || "Saved place").slice(0, 60), place: state.dropoff});
            App.say("Place saved."); loadPlaces();
          } catch (e) { App.say("Could not save the place: " + e.message, "error"); }
        });

        $("book").addEventListener("click", async () => {
          if (!state.dropoff) return;
          $("book").disabled = true;
          try {
            const pickup = {latitude: state.pickup[0], longitude: state.pickup[1]};
            follow(await App.api("POST", "/orders", {pickup, dropoff: state.dropoff}));
            App.say("Booked: finding you a driver.");
          } catch (e) {
            $("book").disabled = false;
            App.say("Booking failed: " + e.message, "error");
          }
        });

        // A ride, followed on its live socket until it ends.
        function follow(order) {
          state.order = order; state.route = []; state.driverAt = null;
          if (state.notes) state.notes.send({watch_nearby: null});   // the cars nearby matter again after the ride
          $("booking").hidden = true; $("ride").hidden = false; $("summary").hidden = true; $("share-link").textContent = "";
          $("messages").replaceChildren();
          App.api("GET", `/orders/${order.id}/messages`).then((reply) => (reply.messages || []).forEach(showMessage)).catch(() => {});
          if (state.orderSocket) state.orderSocket.close();
          state.orderSocket = App.live(`/orders/${order.id}/live`, onRide);
          showOrder(order);
        }

        function showOrder(order) {
          // A reply can arrive after the live socket's newer status: the newest version wins.
          if (state.order && state.order.id === order.id && order.version < state.order.version) return;
          state.order = order;
          if (order.status !== "NEW" && $("notice").textContent.startsWith("Booked")) App.say("");   // the status says it now
          $("status").textContent = labels[order.status] || order.status;
          const driver = order.driver;
          $("driver").textContent = driver ? `${driver.name}` + (driver.car ? ` · ${[driver.car.color, driver.car.make, driver.car.model].filter(Boolean).join(" ")} · ${driver.car.license_plate}` : "") : "";
          $("cancel").hidden = !["NEW", "ACCEPTED", "PICKING_UP", "REACHED_PICKUP"].includes(order.status);
          if (order.status === "COMPLETED") showSummary(order);
          if (order.status === "CANCELLED") { $("eta").textContent = order.cancel_reason ? "Reason: " + order.cancel_reason : ""; $("done").hidden = false; $("summary").hidden = false; $("summary-text").textContent = ""; $("rating").hidden = true; }
          draw();
        }

        function onRide(message) {
          if (message.order) showOrder(message.order);
          if (message.type === "location") state.driverAt = [message.location.coordinates[1], message.location.coordinates[0]];
          if (message.type === "eta") {
            const e = message.estimate || {};
            $("eta").textContent = e.arrive_at ? `Arriving at ${App.time(e.arrive_at)} (${App.minutes(e.route ? e.route.duration : 0)})` : "";
            state.route = e.route && e.route.polyline ? e.route.polyline.coordinates.map((c) => [c[1], c[0]]) : [];
            map.fit(state.route);
          }
          if (message.type === "chat") showMessage(message.message);
          if (message.type === "driver_status" && message.value === "inactive") App.say("Your driver's phone has gone quiet; the ride goes on.");
          if (message.type === "closed") App.say("This ride is no longer yours to follow.", "error");
          draw();
        }

        const showMessage = App.chat(() => state.order, "rider");

        $("cancel").addEventListener("click", async () => {
          try { showOrder(await App.api("POST", `/orders/${state.order.id}/cancel`, {reason: "the rider cancelled in the app"})); App.say("Ride cancelled."); }
          catch (e) { App.say("Could not cancel: " + e.message, "error"); }
        });

        $("share").addEventListener("click", async () => {
          try {
            const link = await App.api("GET", `/orders/${state.order.id}/share`);
            $("share-link").textContent = link.share_url; $("share-link").href = link.share_url;
          } catch (e) { App.say("No share link: " + e.message, "error"); }
        });

        async function showSummary(order) {
          if (!$("summary").hidden) return;
          $("summary").hidden = false; $("rating").hidden = !!order.rating_by_rider; $("cancel").hidden = true; $("eta").textContent = "";
          try {
            const s = await App.api("GET", `/orders/${order.id}/summary`);
            $("summary-text").textContent = `${(s.summary.distance / 1000).toFixed(2)} km in ${App.minutes(s.summary.duration)}` + (s.fare ? ` · ${App.money(s.fare.total_cents, s.fare.currency)}` : "");
          } catch (e) { $("summary-text").textContent = "The summary is on its way."; }
          showPayment(order, 0);
        }

        async function showPayment(order, tries) {
          try {
            const p = await App.api("GET", `/orders/${order.id}/payment`);
            $("payment").textContent = `Paid ${App.money(p.amount_cents, p.currency)}` + (p.provider === "stripe" ? " by card" : "");
            $("pay-again").hidden = true;
            sessionStorage.removeItem("ride.unpaid");
          } catch (e) {
            if (e.code === "payment_failed") {
              $("payment").textContent = e.message + " Add a card below if this one does not pay, then pay again.";
              $("pay-again").hidden = false;
              sessionStorage.setItem("ride.unpaid", order.id);   // shown again after the card page
            }
            else if (tries < 10) { $("payment").textContent = "Charging your card…"; setTimeout(() => showPayment(order, tries + 1), 1000); }
            else $("payment").textContent = "The payment is not recorded yet: see the history later.";
          }
        }

        $("pay-again").addEventListener("click", async () => {
          try { await App.api("POST", `/orders/${state.order.id}/payment`); showPayment(state.order, 0); }
          catch (e) { App.say("Still not paid: " + e.message, "error"); }
        });

        $("rating").addEventListener("click", async (event) => {
          const stars = Number(event.target.dataset.stars);
          if (!stars) return;
          try { await App.api("POST", `/orders/${state.order.id}/rating`, {stars}); $("rating").hidden = true; App.say(`Thank you: you gave ${stars} star${stars === 1 ? "" : "s"}.`); }
          catch (e) { App.say("Rating not saved: " + e.message, "error"); }
        });

        $("done").addEventListener("click", () => {
          if (state.orderSocket) state.orderSocket.close();
          state.order = null; state.route = []; state.driverAt = null; state.dropoff = null;
          $("ride").hidden = true; $("booking").hidden = false; $("dropoff").textContent = "tap the map or search"; $("quote").textContent = "";
          $("book").disabled = true; $("save-place").disabled = true;
          watchNearby(); loadHistory(); draw();
        });

        async function loadHistory() {
          try {
            const reply = await App.api("GET", "/me/history?limit=10");
            $("history").replaceChildren(...reply.rides.map((r) => App.text("li", `${new Date(r.order.created_at).toLocaleString()} · ${r.order.dropoff.address || "ride"} · ${r.order.status}` + (r.payment ? ` · ${App.money(r.payment.amount_cents, r.payment.currency)}` : ""))));
          } catch (e) { /* shown empty */ }
          try {
            const cards = await App.api("GET", "/me/cards");
            $("cards").replaceChildren(...(cards.cards || []).map((c) => App.text("li", `${c.brand} ·${c.last4} (${c.exp_month}/${c.exp_year})`)));
            if (!(cards.cards || []).length) $("cards").replaceChildren(App.text("li", "No saved card yet."));
            $("add-card").hidden = false;
          } catch (e) {
            // 409: the platform charges rides through its ledger, which keeps no cards.
            $("cards").replaceChildren(App.text("li", e.status === 409 ? "No cards here: this platform records rides' fares in its own ledger." : e.message));
          }
        }

        // A card is typed on the provider's own page (never here); it sends the browser back to
        // #card-added or #card-cancelled.
        $("add-card").addEventListener("click", async () => {
          try { location.assign((await App.api("POST", "/me/cards/setup")).url); }
          catch (e) { App.say("Cannot add a card now: " + e.message, "error"); }
        });

        // Back from the card page: say how it went, and show again a ride still to pay.
        async function backFromCardPage() {
          const back = location.hash;
          if (back !== "#card-added" && back !== "#card-cancelled") return false;
          history.replaceState(null, "", location.pathname);
          const unpaid = sessionStorage.getItem("ride.unpaid");
          App.say(back === "#card-added" ? "Your card is saved: it pays your next charge" + (unpaid ? " — pay your last ride again below." : ".") : "No card was added.");
          if (!unpaid) return false;
          try { follow(await App.api("GET", `/orders/${encodeURIComponent(unpaid)}`)); return true; }
          catch (e) { sessionStorage.removeItem("ride.unpaid"); return false; }
        }

        App.onSession = async () => {
          const signedIn = !!App.session;
          $("sign-in").hidden = signedIn; $("log-out").hidden = !signedIn; $("app").hidden = !signedIn;
          if (!signedIn) return;
          $("who").textContent = App.session.user.name;
          state.notes = App.live("/me/live", onNotification);
          watchNearby();
          loadPlaces(); loadHistory();
          if (await backFromCardPage()) { draw(); return; }
          try {
            const mine = await App.api("GET", "/orders?limit=5");
            const open = (mine.orders || []).find((o) => !["COMPLETED", "CANCELLED"].includes(o.status));
            if (open) follow(open);
          } catch (e) { App.say(e.message, "error"); }
          draw();
        };

        $("pickup").textContent = `${state.pickup[0].toFixed(5)}, ${state.pickup[1].toFixed(5)}`;
        App.signIn("rider");
        App.onSession();
        """#
}
