users.login
{"phone_number":"+380501112233","password":"secret123"}