from alerts.typed import Webhook


def deploy_webhook(session, webhook_id, deployer):
    webhook = session.get(Webhook, webhook_id)
    if webhook.deployed:
        return
    webhook.deployed = True  # ok: IDM101 the flush compares the version it read
    session.commit()
    deployer.deploy(webhook_id)
