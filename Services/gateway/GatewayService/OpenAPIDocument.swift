/// `/openapi.json`: written down, not derived from the router, and kept true by a test that
/// compares its operations with the routes the gateway registers (`RouteRegistry`), both ways.
enum OpenAPIDocument {
    static let json = #"""
        {
          "openapi": "3.1.0",
          "info": {
            "title": "Ridesharing gateway",
            "version": "1.0.0",
            "description": "The HTTP and WebSocket API of the rider and driver apps (under /v1, bearer tokens from POST /v1/sessions), share links, and HyperTrack v3-compatible trip routes (HTTP Basic: account id and secret key). Errors are {\"error\":{\"code\",\"message\"}}."
          },
          "servers": [
            {
              "url": "/"
            }
          ],
          "paths": {
            "/v1/users": {
              "post": {
                "summary": "Sign up a rider or a driver",
                "tags": [
                  "accounts"
                ],
                "responses": {
                  "201": {
                    "description": "the new user",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/User"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/Registration"
                      }
                    }
                  }
                },
                "security": []
              }
            },
            "/v1/sessions": {
              "post": {
                "summary": "Log in: a bearer token for the other routes",
                "tags": [
                  "accounts"
                ],
                "responses": {
                  "200": {
                    "description": "the session",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Session"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/Login"
                      }
                    }
                  }
                },
                "security": []
              }
            },
            "/v1/me": {
              "get": {
                "summary": "The caller's profile",
                "tags": [
                  "accounts"
                ],
                "responses": {
                  "200": {
                    "description": "the user",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/User"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ]
              },
              "patch": {
                "summary": "Change the caller's profile (name, phone_number, password, device_id, car)",
                "tags": [
                  "accounts"
                ],
                "responses": {
                  "200": {
                    "description": "the user",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/User"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/ProfileChange"
                      }
                    }
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/me/availability": {
              "put": {
                "summary": "A driver goes available or unavailable for offers",
                "tags": [
                  "drivers"
                ],
                "responses": {
                  "200": {
                    "description": "the device as tracking holds it",
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "type": "object",
                        "required": [
                          "available"
                        ],
                        "properties": {
                          "available": {
                            "type": "boolean"
                          }
                        }
                      }
                    }
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/devices/{device_id}/locations": {
              "post": {
                "summary": "A driver's phone posts a batch of fixes (forwarded to tracking)",
                "tags": [
                  "drivers"
                ],
                "responses": {
                  "200": {
                    "description": "the acknowledgement",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/IngestAck"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/LocationBatch"
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "device_id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the driver's own device id"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/orders": {
              "post": {
                "summary": "A rider books a ride",
                "tags": [
                  "orders"
                ],
                "responses": {
                  "201": {
                    "description": "the new order, offered to the nearest available drivers",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Order"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/Booking"
                      }
                    }
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ]
              },
              "get": {
                "summary": "The caller's orders (a driver: accepted by or offered to them), or with latitude and longitude the orders of a status near a point",
                "tags": [
                  "orders"
                ],
                "responses": {
                  "200": {
                    "description": "orders, newest (or nearest) first",
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object",
                          "properties": {
                            "orders": {
                              "type": "array",
                              "items": {
                                "$ref": "#/components/schemas/Order"
                              }
                            }
                          }
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "status",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "string"
                    },
                    "description": "NEW, ACCEPTED, … COMPLETED, CANCELLED"
                  },
                  {
                    "name": "latitude",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "number"
                    },
                    "description": "with longitude: orders near this point"
                  },
                  {
                    "name": "longitude",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "number"
                    },
                    "description": "with latitude"
                  },
                  {
                    "name": "radius",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "number"
                    },
                    "description": "metres, default 5000"
                  },
                  {
                    "name": "limit",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "integer"
                    },
                    "description": "1 to 500"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/orders/{id}": {
              "get": {
                "summary": "One order (its rider, or a driver it is offered to or accepted by)",
                "tags": [
                  "orders"
                ],
                "responses": {
                  "200": {
                    "description": "the order",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Order"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the order's id"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/orders/{id}/accept": {
              "post": {
                "summary": "A driver accepts an offered order (the first wins; others get 409)",
                "tags": [
                  "orders"
                ],
                "responses": {
                  "200": {
                    "description": "the order",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Order"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the order's id"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/orders/{id}/decline": {
              "post": {
                "summary": "A driver declines an offer (offered to the next driver)",
                "tags": [
                  "orders"
                ],
                "responses": {
                  "200": {
                    "description": "the order",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Order"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the order's id"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/orders/{id}/start": {
              "post": {
                "summary": "The driver starts the ride at the pickup",
                "tags": [
                  "orders"
                ],
                "responses": {
                  "200": {
                    "description": "the order",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Order"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the order's id"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/orders/{id}/end": {
              "post": {
                "summary": "The driver ends the ride at the dropoff: COMPLETED with summary and fare",
                "tags": [
                  "orders"
                ],
                "responses": {
                  "200": {
                    "description": "the order",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Order"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the order's id"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/orders/{id}/cancel": {
              "post": {
                "summary": "The rider or the driver cancels an open order",
                "tags": [
                  "orders"
                ],
                "responses": {
                  "200": {
                    "description": "the order",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Order"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "type": "object",
                        "properties": {
                          "reason": {
                            "type": "string"
                          }
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the order's id"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/orders/{id}/share": {
              "get": {
                "summary": "The share link of the order's current trip",
                "tags": [
                  "orders"
                ],
                "responses": {
                  "200": {
                    "description": "the link",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/ShareLink"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the order's id"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/orders/{id}/summary": {
              "get": {
                "summary": "A completed ride's summary and fare",
                "tags": [
                  "orders"
                ],
                "responses": {
                  "200": {
                    "description": "the summary",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/RideSummary"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the order's id"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/orders/{id}/live": {
              "get": {
                "summary": "Live updates over WebSocket (Upgrade: websocket)",
                "tags": [
                  "orders"
                ],
                "responses": {
                  "101": {
                    "description": "switching protocols"
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "description": "Text messages, one JSON object each, with `type`: `snapshot` {sequence, order} first (without `after`); `status` {sequence, order, previous_status} for every status change, once each, in order; `location` {order_id, device_id, location, recorded_at, speed, accuracy, bearing}; `eta` {order_id, trip_id, estimate}; `chat` {order_id, sequence, message} for every chat message (also replayed after `after`). Authorization is checked once the connection is open: a refused connection receives one message {\"type\":\"error\",\"status\":401|403|404|422,\"error\":{\"code\",\"message\"}} and is closed with code 4000 + status.",
                "parameters": [
                  {
                    "name": "id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the order's id"
                  },
                  {
                    "name": "after",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "integer"
                    },
                    "description": "the sequence of the last message received: the statuses since then come first"
                  },
                  {
                    "name": "access_token",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the bearer token, for clients that cannot set headers"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/shares/{share_id}": {
              "get": {
                "summary": "What a share page shows: the trip, the driver's name and car, their position while active",
                "tags": [
                  "share links"
                ],
                "responses": {
                  "200": {
                    "description": "the shared trip",
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object",
                          "properties": {
                            "trip": {
                              "$ref": "#/components/schemas/Trip"
                            },
                            "driver": {
                              "type": "object"
                            },
                            "share_url": {
                              "type": "string"
                            },
                            "location": {
                              "type": "object"
                            }
                          }
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "share_id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "7 characters"
                  }
                ],
                "security": []
              }
            },
            "/{share_id}": {
              "get": {
                "summary": "The share page (HTML): the trip live, then its summary",
                "tags": [
                  "share links"
                ],
                "responses": {
                  "200": {
                    "description": "an HTML page",
                    "content": {
                      "text/html": {
                        "schema": {
                          "type": "string"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "share_id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "7 characters"
                  }
                ],
                "security": []
              }
            },
            "/openapi.json": {
              "get": {
                "summary": "This document",
                "tags": [
                  "meta"
                ],
                "responses": {
                  "200": {
                    "description": "OpenAPI 3.1",
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "security": []
              }
            },
            "/trips": {
              "post": {
                "summary": "HyperTrack v3: create a trip",
                "tags": [
                  "hypertrack"
                ],
                "responses": {
                  "201": {
                    "description": "the trip (HyperTrack's shape)",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Trip"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/TripRequest"
                      }
                    }
                  }
                },
                "security": [
                  {
                    "basic": []
                  }
                ]
              }
            },
            "/trips/{trip_id}": {
              "get": {
                "summary": "HyperTrack v3: a trip",
                "tags": [
                  "hypertrack"
                ],
                "responses": {
                  "200": {
                    "description": "the trip",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Trip"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "trip_id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the trip's id"
                  }
                ],
                "security": [
                  {
                    "basic": []
                  }
                ]
              }
            },
            "/trips/{trip_id}/complete": {
              "post": {
                "summary": "HyperTrack v3: complete a trip (adds its summary)",
                "tags": [
                  "hypertrack"
                ],
                "responses": {
                  "200": {
                    "description": "the trip",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Trip"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "trip_id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the trip's id"
                  }
                ],
                "security": [
                  {
                    "basic": []
                  }
                ]
              }
            },
            "/devices/nearby": {
              "post": {
                "summary": "HyperTrack v3: devices near a point, nearest first",
                "tags": [
                  "hypertrack"
                ],
                "responses": {
                  "200": {
                    "description": "the devices",
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object",
                          "properties": {
                            "devices": {
                              "type": "array",
                              "items": {
                                "type": "object"
                              }
                            }
                          }
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "type": "object",
                        "required": [
                          "location",
                          "radius"
                        ],
                        "properties": {
                          "location": {
                            "$ref": "#/components/schemas/Point"
                          },
                          "radius": {
                            "type": "number"
                          },
                          "limit": {
                            "type": "integer"
                          },
                          "available_only": {
                            "type": "boolean"
                          },
                          "last_updated_within": {
                            "type": "number"
                          },
                          "metadata": {
                            "type": "object"
                          },
                          "devices": {
                            "type": "array",
                            "items": {
                              "type": "string"
                            }
                          }
                        }
                      }
                    }
                  }
                },
                "security": [
                  {
                    "basic": []
                  }
                ]
              }
            },
            "/dashboard": {
              "get": {
                "summary": "The operator's dashboard (HTML): devices on a map, open orders by status, service health",
                "tags": [
                  "operators"
                ],
                "responses": {
                  "200": {
                    "description": "an HTML page",
                    "content": {
                      "text/html": {
                        "schema": {
                          "type": "string"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "security": [
                  {
                    "basic": []
                  }
                ]
              }
            },
            "/dashboard/data": {
              "get": {
                "summary": "What the dashboard shows, as JSON",
                "tags": [
                  "operators"
                ],
                "responses": {
                  "200": {
                    "description": "services (name → has workers), devices (tracking's Nearby entries), orders (by_status, open)",
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object",
                          "properties": {
                            "services": {
                              "type": "object",
                              "additionalProperties": {
                                "type": "boolean"
                              }
                            },
                            "devices": {
                              "type": "array",
                              "items": {
                                "type": "object"
                              }
                            },
                            "orders": {
                              "type": "object",
                              "properties": {
                                "by_status": {
                                  "type": "object",
                                  "additionalProperties": {
                                    "type": "integer"
                                  }
                                },
                                "open": {
                                  "type": "array",
                                  "items": {
                                    "type": "object"
                                  }
                                }
                              }
                            }
                          }
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "security": [
                  {
                    "basic": []
                  }
                ]
              }
            },
            "/v1/notifications": {
              "get": {
                "summary": "The caller's notifications, newest first",
                "tags": [
                  "notifications"
                ],
                "parameters": [
                  {
                    "name": "limit",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "integer"
                    },
                    "description": "1 to 500, default 50"
                  }
                ],
                "responses": {
                  "200": {
                    "description": "the inbox",
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object",
                          "properties": {
                            "notifications": {
                              "type": "array",
                              "items": {
                                "$ref": "#/components/schemas/Notification"
                              }
                            }
                          }
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/notifications/push_tokens": {
              "post": {
                "summary": "Register the caller's phone for push notifications",
                "tags": [
                  "notifications"
                ],
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "type": "object",
                        "required": [
                          "token"
                        ],
                        "properties": {
                          "token": {
                            "type": "string"
                          }
                        }
                      }
                    }
                  }
                },
                "responses": {
                  "200": {
                    "description": "registered",
                    "content": {
                      "application/json": {
                        "schema": {
                          "type": "object"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/me/live": {
              "get": {
                "summary": "The caller's notifications as they are made, over WebSocket (Upgrade: websocket)",
                "tags": [
                  "notifications"
                ],
                "description": "Text messages {\"type\":\"notification\",\"notification\":Notification}. Missed ones are in GET /v1/notifications. Authorization is checked once the connection is open: a refused connection receives one message {\"type\":\"error\",\"status\":401|403|404|422,\"error\":{\"code\",\"message\"}} and is closed with code 4000 + status.",
                "parameters": [
                  {
                    "name": "access_token",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the bearer token, for clients that cannot set headers"
                  }
                ],
                "responses": {
                  "101": {
                    "description": "switching protocols"
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/orders/{id}/messages": {
              "get": {
                "summary": "The order's chat (rider and driver only; read-only after the ride)",
                "tags": [
                  "chat"
                ],
                "responses": {
                  "200": {
                    "description": "the messages after ?after, oldest first",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/ChatMessages"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the order's id"
                  },
                  {
                    "name": "after",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "integer"
                    },
                    "description": "messages after this number (0: from the start)"
                  },
                  {
                    "name": "limit",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "integer"
                    },
                    "description": "1 to 500, default 100"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              },
              "post": {
                "summary": "Send a message to the other party while a driver is on the order",
                "tags": [
                  "chat"
                ],
                "responses": {
                  "201": {
                    "description": "the message (also sent live on /v1/orders/{id}/live and as a chat_message notification)",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/ChatMessage"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "type": "object",
                        "properties": {
                          "text": {
                            "type": "string",
                            "maxLength": 2000
                          }
                        },
                        "required": [
                          "text"
                        ]
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the order's id"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/orders/{id}/rating": {
              "post": {
                "summary": "Rate the other party of a COMPLETED ride, once (1–5 stars)",
                "tags": [
                  "ratings"
                ],
                "responses": {
                  "200": {
                    "description": "the order with the rating",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Order"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "type": "object",
                        "properties": {
                          "stars": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": 5
                          },
                          "comment": {
                            "type": "string",
                            "maxLength": 500
                          }
                        },
                        "required": [
                          "stars"
                        ]
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the order's id"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/orders/{id}/payment": {
              "get": {
                "summary": "The payment of a COMPLETED ride (404 no_payment before)",
                "tags": [
                  "payments"
                ],
                "responses": {
                  "200": {
                    "description": "the payment record",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Payment"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the order's id"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/fares/estimate": {
              "post": {
                "summary": "What a ride would cost now (riders; surge included)",
                "tags": [
                  "payments"
                ],
                "responses": {
                  "200": {
                    "description": "the estimate",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/FareEstimate"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "$ref": "#/components/schemas/Booking"
                      }
                    }
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/me/history": {
              "get": {
                "summary": "My finished rides, newest first, with route summary, fare, ratings and payment",
                "tags": [
                  "history"
                ],
                "responses": {
                  "200": {
                    "description": "a page of rides",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/RideHistory"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "before",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "string"
                    },
                    "description": "next_before of the previous page"
                  },
                  {
                    "name": "limit",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "integer"
                    },
                    "description": "1 to 100, default 20"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/me/earnings": {
              "get": {
                "summary": "A driver's earnings per day (UTC)",
                "tags": [
                  "payments"
                ],
                "responses": {
                  "200": {
                    "description": "days with rides, newest first",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Earnings"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "days",
                    "in": "query",
                    "required": false,
                    "schema": {
                      "type": "integer"
                    },
                    "description": "how many days back, 1 to 366, default 7"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/me/places": {
              "get": {
                "summary": "My saved places",
                "tags": [
                  "places"
                ],
                "responses": {
                  "200": {
                    "description": "the places, oldest first",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SavedPlaces"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ]
              },
              "post": {
                "summary": "Save a place (home and work replace the previous one; other needs a name)",
                "tags": [
                  "places"
                ],
                "responses": {
                  "201": {
                    "description": "the saved place",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SavedPlace"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "requestBody": {
                  "required": true,
                  "content": {
                    "application/json": {
                      "schema": {
                        "type": "object",
                        "properties": {
                          "label": {
                            "type": "string",
                            "enum": [
                              "home",
                              "work",
                              "other"
                            ]
                          },
                          "name": {
                            "type": "string"
                          },
                          "place": {
                            "$ref": "#/components/schemas/Place"
                          }
                        },
                        "required": [
                          "label",
                          "place"
                        ]
                      }
                    }
                  }
                },
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            },
            "/v1/me/places/{place_id}": {
              "delete": {
                "summary": "Delete a saved place",
                "tags": [
                  "places"
                ],
                "responses": {
                  "200": {
                    "description": "the places left",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/SavedPlaces"
                        }
                      }
                    }
                  },
                  "default": {
                    "description": "an error: 400 not JSON, 401 no or bad token, 403 not yours, 404 unknown, 409 wrong status (the message names the current one), 422 a field is wrong (the message names it), 503 a service is down",
                    "content": {
                      "application/json": {
                        "schema": {
                          "$ref": "#/components/schemas/Error"
                        }
                      }
                    }
                  }
                },
                "parameters": [
                  {
                    "name": "place_id",
                    "in": "path",
                    "required": true,
                    "schema": {
                      "type": "string"
                    },
                    "description": "the saved place's id"
                  }
                ],
                "security": [
                  {
                    "bearer": []
                  }
                ]
              }
            }
          },
          "components": {
            "schemas": {
              "Error": {
                "type": "object",
                "properties": {
                  "error": {
                    "type": "object",
                    "properties": {
                      "code": {
                        "type": "string"
                      },
                      "message": {
                        "type": "string"
                      }
                    },
                    "required": [
                      "code",
                      "message"
                    ]
                  }
                },
                "required": [
                  "error"
                ]
              },
              "Car": {
                "type": "object",
                "properties": {
                  "model": {
                    "type": "string"
                  },
                  "license_plate": {
                    "type": "string"
                  }
                },
                "required": [
                  "model",
                  "license_plate"
                ]
              },
              "User": {
                "type": "object",
                "properties": {
                  "id": {
                    "type": "string"
                  },
                  "role": {
                    "type": "string",
                    "enum": [
                      "rider",
                      "driver"
                    ]
                  },
                  "name": {
                    "type": "string"
                  },
                  "phone_number": {
                    "type": "string"
                  },
                  "device_id": {
                    "type": "string"
                  },
                  "car": {
                    "$ref": "#/components/schemas/Car"
                  },
                  "created_at": {
                    "type": "string",
                    "format": "date-time"
                  },
                  "rating": {
                    "$ref": "#/components/schemas/UserRating"
                  }
                },
                "required": [
                  "id",
                  "role",
                  "name",
                  "phone_number",
                  "created_at"
                ]
              },
              "Registration": {
                "type": "object",
                "properties": {
                  "role": {
                    "type": "string",
                    "enum": [
                      "rider",
                      "driver"
                    ]
                  },
                  "name": {
                    "type": "string"
                  },
                  "phone_number": {
                    "type": "string"
                  },
                  "password": {
                    "type": "string"
                  },
                  "device_id": {
                    "type": "string"
                  },
                  "car": {
                    "$ref": "#/components/schemas/Car"
                  }
                },
                "required": [
                  "role",
                  "name",
                  "phone_number",
                  "password"
                ]
              },
              "Login": {
                "type": "object",
                "properties": {
                  "phone_number": {
                    "type": "string"
                  },
                  "password": {
                    "type": "string"
                  }
                },
                "required": [
                  "phone_number",
                  "password"
                ]
              },
              "Session": {
                "type": "object",
                "properties": {
                  "token": {
                    "type": "string"
                  },
                  "expires_at": {
                    "type": "string",
                    "format": "date-time"
                  },
                  "user": {
                    "$ref": "#/components/schemas/User"
                  }
                },
                "required": [
                  "token",
                  "expires_at",
                  "user"
                ]
              },
              "ProfileChange": {
                "type": "object",
                "properties": {
                  "name": {
                    "type": "string"
                  },
                  "phone_number": {
                    "type": "string"
                  },
                  "password": {
                    "type": "string"
                  },
                  "device_id": {
                    "type": "string"
                  },
                  "car": {
                    "$ref": "#/components/schemas/Car"
                  }
                }
              },
              "Place": {
                "type": "object",
                "properties": {
                  "latitude": {
                    "type": "number"
                  },
                  "longitude": {
                    "type": "number"
                  },
                  "address": {
                    "type": "string"
                  }
                },
                "required": [
                  "latitude",
                  "longitude"
                ]
              },
              "Point": {
                "type": "object",
                "properties": {
                  "type": {
                    "type": "string",
                    "enum": [
                      "Point"
                    ]
                  },
                  "coordinates": {
                    "type": "array",
                    "items": {
                      "type": "number"
                    },
                    "description": "[longitude, latitude]"
                  }
                },
                "required": [
                  "type",
                  "coordinates"
                ]
              },
              "Booking": {
                "type": "object",
                "description": "each place as a Place or as the id of a saved place (GET /v1/me/places)",
                "properties": {
                  "pickup": {
                    "$ref": "#/components/schemas/Place"
                  },
                  "dropoff": {
                    "$ref": "#/components/schemas/Place"
                  },
                  "pickup_place_id": {
                    "type": "string"
                  },
                  "dropoff_place_id": {
                    "type": "string"
                  }
                }
              },
              "Fare": {
                "type": "object",
                "properties": {
                  "currency": {
                    "type": "string"
                  },
                  "total_cents": {
                    "type": "integer"
                  },
                  "distance_m": {
                    "type": "integer"
                  },
                  "duration_s": {
                    "type": "integer"
                  },
                  "surge": {
                    "type": "number",
                    "description": "the multiplier quoted at booking; absent means 1"
                  }
                },
                "required": [
                  "currency",
                  "total_cents",
                  "distance_m",
                  "duration_s"
                ]
              },
              "Order": {
                "type": "object",
                "properties": {
                  "id": {
                    "type": "string"
                  },
                  "status": {
                    "type": "string",
                    "enum": [
                      "NEW",
                      "ACCEPTED",
                      "PICKING_UP",
                      "REACHED_PICKUP",
                      "STARTED_RIDE",
                      "DROPPING_OFF",
                      "REACHED_DROPOFF",
                      "COMPLETED",
                      "CANCELLED"
                    ]
                  },
                  "version": {
                    "type": "integer"
                  },
                  "rider": {
                    "$ref": "#/components/schemas/User"
                  },
                  "driver": {
                    "$ref": "#/components/schemas/User"
                  },
                  "pickup": {
                    "$ref": "#/components/schemas/Place"
                  },
                  "dropoff": {
                    "$ref": "#/components/schemas/Place"
                  },
                  "trip_id": {
                    "type": "string"
                  },
                  "offered_to": {
                    "type": "array",
                    "items": {
                      "type": "string"
                    }
                  },
                  "summary": {
                    "$ref": "#/components/schemas/TripSummary"
                  },
                  "fare": {
                    "$ref": "#/components/schemas/Fare"
                  },
                  "cancel_reason": {
                    "type": "string"
                  },
                  "created_at": {
                    "type": "string",
                    "format": "date-time"
                  },
                  "updated_at": {
                    "type": "string",
                    "format": "date-time"
                  },
                  "surge": {
                    "type": "number",
                    "description": "the fare multiplier quoted at booking (demand near the pickup); absent means 1"
                  },
                  "rating_by_rider": {
                    "$ref": "#/components/schemas/Rating"
                  },
                  "rating_by_driver": {
                    "$ref": "#/components/schemas/Rating"
                  }
                },
                "required": [
                  "id",
                  "status",
                  "version",
                  "rider",
                  "pickup",
                  "dropoff",
                  "created_at",
                  "updated_at"
                ]
              },
              "TripSummary": {
                "type": "object",
                "properties": {
                  "distance": {
                    "type": "number"
                  },
                  "duration": {
                    "type": "number"
                  },
                  "started_at": {
                    "type": "string",
                    "format": "date-time"
                  },
                  "completed_at": {
                    "type": "string",
                    "format": "date-time"
                  },
                  "device_id": {
                    "type": "string"
                  },
                  "locations": {
                    "type": "object"
                  },
                  "markers": {
                    "type": "array",
                    "items": {
                      "type": "object"
                    }
                  }
                }
              },
              "Trip": {
                "type": "object",
                "properties": {
                  "trip_id": {
                    "type": "string"
                  },
                  "device_id": {
                    "type": "string"
                  },
                  "share_id": {
                    "type": "string"
                  },
                  "status": {
                    "type": "string",
                    "enum": [
                      "active",
                      "completed"
                    ]
                  },
                  "started_at": {
                    "type": "string",
                    "format": "date-time"
                  },
                  "completed_at": {
                    "type": "string",
                    "format": "date-time"
                  },
                  "views": {
                    "type": "object",
                    "properties": {
                      "share_url": {
                        "type": "string"
                      },
                      "embed_url": {
                        "type": "string"
                      }
                    }
                  },
                  "destination": {
                    "type": "object"
                  },
                  "estimate": {
                    "type": "object"
                  },
                  "summary": {
                    "$ref": "#/components/schemas/TripSummary"
                  },
                  "metadata": {
                    "type": "object"
                  }
                },
                "required": [
                  "trip_id",
                  "device_id",
                  "status",
                  "started_at",
                  "destination"
                ]
              },
              "TripRequest": {
                "type": "object",
                "properties": {
                  "device_id": {
                    "type": "string"
                  },
                  "destination": {
                    "type": "object",
                    "properties": {
                      "geometry": {
                        "$ref": "#/components/schemas/Point"
                      },
                      "radius": {
                        "type": "number"
                      },
                      "address": {
                        "type": "string"
                      }
                    },
                    "required": [
                      "geometry"
                    ]
                  },
                  "metadata": {
                    "type": "object"
                  },
                  "idempotency_key": {
                    "type": "string"
                  }
                },
                "required": [
                  "device_id",
                  "destination"
                ]
              },
              "ShareLink": {
                "type": "object",
                "properties": {
                  "share_id": {
                    "type": "string"
                  },
                  "share_url": {
                    "type": "string"
                  },
                  "trip_id": {
                    "type": "string"
                  }
                },
                "required": [
                  "share_id",
                  "share_url",
                  "trip_id"
                ]
              },
              "RideSummary": {
                "type": "object",
                "properties": {
                  "order_id": {
                    "type": "string"
                  },
                  "summary": {
                    "$ref": "#/components/schemas/TripSummary"
                  },
                  "fare": {
                    "$ref": "#/components/schemas/Fare"
                  }
                },
                "required": [
                  "order_id",
                  "summary"
                ]
              },
              "LocationBatch": {
                "type": "object",
                "properties": {
                  "batch_id": {
                    "type": "integer"
                  },
                  "locations": {
                    "type": "array",
                    "items": {
                      "type": "object",
                      "properties": {
                        "latitude": {
                          "type": "number"
                        },
                        "longitude": {
                          "type": "number"
                        },
                        "recorded_at": {
                          "type": "string",
                          "format": "date-time"
                        },
                        "accuracy": {
                          "type": "number"
                        },
                        "speed": {
                          "type": "number"
                        },
                        "bearing": {
                          "type": "number"
                        },
                        "altitude": {
                          "type": "number"
                        }
                      },
                      "required": [
                        "latitude",
                        "longitude",
                        "recorded_at"
                      ]
                    }
                  },
                  "device": {
                    "type": "object",
                    "properties": {
                      "name": {
                        "type": "string"
                      },
                      "available": {
                        "type": "boolean"
                      },
                      "tracking": {
                        "type": "boolean"
                      },
                      "metadata": {
                        "type": "object"
                      },
                      "changed_at": {
                        "type": "string",
                        "format": "date-time"
                      }
                    }
                  }
                },
                "required": [
                  "batch_id",
                  "locations"
                ]
              },
              "IngestAck": {
                "type": "object",
                "properties": {
                  "batch_id": {
                    "type": "integer"
                  },
                  "accepted": {
                    "type": "integer"
                  },
                  "rejected": {
                    "type": "array",
                    "items": {
                      "type": "object"
                    }
                  }
                }
              },
              "Notification": {
                "type": "object",
                "properties": {
                  "id": {
                    "type": "string"
                  },
                  "user_id": {
                    "type": "string"
                  },
                  "kind": {
                    "type": "string",
                    "description": "new_offer, driver_assigned, driver_arriving, driver_arrived, ride_started, ride_completed, ride_cancelled"
                  },
                  "title": {
                    "type": "string"
                  },
                  "body": {
                    "type": "string"
                  },
                  "order_id": {
                    "type": "string"
                  },
                  "created_at": {
                    "type": "string",
                    "format": "date-time"
                  }
                },
                "required": [
                  "id",
                  "user_id",
                  "kind",
                  "title",
                  "body",
                  "created_at"
                ]
              },
              "Rating": {
                "type": "object",
                "properties": {
                  "stars": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 5
                  },
                  "comment": {
                    "type": "string"
                  },
                  "created_at": {
                    "type": "string",
                    "format": "date-time"
                  }
                },
                "required": [
                  "stars",
                  "created_at"
                ]
              },
              "UserRating": {
                "type": "object",
                "properties": {
                  "average": {
                    "type": "number"
                  },
                  "count": {
                    "type": "integer"
                  }
                },
                "required": [
                  "average",
                  "count"
                ]
              },
              "ChatMessage": {
                "type": "object",
                "properties": {
                  "id": {
                    "type": "string"
                  },
                  "order_id": {
                    "type": "string"
                  },
                  "number": {
                    "type": "integer",
                    "description": "1, 2, 3… within the order"
                  },
                  "sender_id": {
                    "type": "string"
                  },
                  "sender_role": {
                    "type": "string",
                    "enum": [
                      "rider",
                      "driver"
                    ]
                  },
                  "recipient_id": {
                    "type": "string"
                  },
                  "text": {
                    "type": "string"
                  },
                  "sent_at": {
                    "type": "string",
                    "format": "date-time"
                  }
                },
                "required": [
                  "id",
                  "order_id",
                  "number",
                  "sender_id",
                  "sender_role",
                  "recipient_id",
                  "text",
                  "sent_at"
                ]
              },
              "ChatMessages": {
                "type": "object",
                "properties": {
                  "order_id": {
                    "type": "string"
                  },
                  "open": {
                    "type": "boolean",
                    "description": "false once the ride is over: the chat is read-only"
                  },
                  "messages": {
                    "type": "array",
                    "items": {
                      "$ref": "#/components/schemas/ChatMessage"
                    }
                  }
                },
                "required": [
                  "order_id",
                  "open",
                  "messages"
                ]
              },
              "Payment": {
                "type": "object",
                "properties": {
                  "id": {
                    "type": "string"
                  },
                  "order_id": {
                    "type": "string"
                  },
                  "rider_id": {
                    "type": "string"
                  },
                  "driver_id": {
                    "type": "string"
                  },
                  "provider": {
                    "type": "string"
                  },
                  "provider_reference": {
                    "type": "string"
                  },
                  "currency": {
                    "type": "string"
                  },
                  "amount_cents": {
                    "type": "integer"
                  },
                  "driver_earnings_cents": {
                    "type": "integer"
                  },
                  "commission_cents": {
                    "type": "integer"
                  },
                  "captured_at": {
                    "type": "string",
                    "format": "date-time"
                  }
                },
                "required": [
                  "id",
                  "order_id",
                  "provider",
                  "provider_reference",
                  "currency",
                  "amount_cents",
                  "driver_earnings_cents",
                  "commission_cents",
                  "captured_at"
                ]
              },
              "FareEstimate": {
                "type": "object",
                "properties": {
                  "currency": {
                    "type": "string"
                  },
                  "total_cents": {
                    "type": "integer"
                  },
                  "distance_m": {
                    "type": "integer"
                  },
                  "duration_s": {
                    "type": "integer"
                  },
                  "surge": {
                    "type": "number"
                  },
                  "pickup": {
                    "$ref": "#/components/schemas/Place"
                  },
                  "dropoff": {
                    "$ref": "#/components/schemas/Place"
                  }
                },
                "required": [
                  "currency",
                  "total_cents",
                  "distance_m",
                  "duration_s",
                  "surge",
                  "pickup",
                  "dropoff"
                ]
              },
              "RideHistory": {
                "type": "object",
                "properties": {
                  "rides": {
                    "type": "array",
                    "items": {
                      "type": "object",
                      "properties": {
                        "order": {
                          "$ref": "#/components/schemas/Order"
                        },
                        "payment": {
                          "$ref": "#/components/schemas/Payment"
                        }
                      },
                      "required": [
                        "order"
                      ]
                    }
                  },
                  "next_before": {
                    "type": "string",
                    "description": "pass as ?before= for the next page; absent on the last"
                  }
                },
                "required": [
                  "rides"
                ]
              },
              "Earnings": {
                "type": "object",
                "properties": {
                  "driver_id": {
                    "type": "string"
                  },
                  "currency": {
                    "type": "string"
                  },
                  "total_cents": {
                    "type": "integer"
                  },
                  "days": {
                    "type": "array",
                    "items": {
                      "type": "object",
                      "properties": {
                        "day": {
                          "type": "string",
                          "description": "YYYY-MM-DD, UTC"
                        },
                        "rides": {
                          "type": "integer"
                        },
                        "fares_cents": {
                          "type": "integer"
                        },
                        "earnings_cents": {
                          "type": "integer"
                        }
                      },
                      "required": [
                        "day",
                        "rides",
                        "fares_cents",
                        "earnings_cents"
                      ]
                    }
                  }
                },
                "required": [
                  "driver_id",
                  "currency",
                  "days",
                  "total_cents"
                ]
              },
              "SavedPlace": {
                "type": "object",
                "properties": {
                  "id": {
                    "type": "string"
                  },
                  "user_id": {
                    "type": "string"
                  },
                  "label": {
                    "type": "string",
                    "enum": [
                      "home",
                      "work",
                      "other"
                    ]
                  },
                  "name": {
                    "type": "string"
                  },
                  "place": {
                    "$ref": "#/components/schemas/Place"
                  },
                  "created_at": {
                    "type": "string",
                    "format": "date-time"
                  }
                },
                "required": [
                  "id",
                  "user_id",
                  "label",
                  "name",
                  "place",
                  "created_at"
                ]
              },
              "SavedPlaces": {
                "type": "object",
                "properties": {
                  "places": {
                    "type": "array",
                    "items": {
                      "$ref": "#/components/schemas/SavedPlace"
                    }
                  }
                },
                "required": [
                  "places"
                ]
              }
            },
            "securitySchemes": {
              "bearer": {
                "type": "http",
                "scheme": "bearer"
              },
              "basic": {
                "type": "http",
                "scheme": "basic"
              }
            }
          }
        }
        """#
}
